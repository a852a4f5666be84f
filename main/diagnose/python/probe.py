# gpu-workbench diagnose: what CUDA the program's Python will use, read without importing torch or cupy
# (importing them starts CUDA, slowly) and without importlib.metadata (importing it, and reading every installed
# distribution's metadata, costs more than Python's own start). The folders on sys.path are listed instead: an
# installed distribution is a folder named <name>-<version>.dist-info (or .egg-info). Prints one JSON object.
import json
import os
import re
import sys

facts = {"python": sys.version.split()[0], "executable": sys.executable, "packages": {}}
INSTALLED = re.compile(r"^([A-Za-z0-9_.]+)-([^-]+?)\.(?:dist-info|egg-info)$")


def normalized(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def installed():
    """Each distribution on sys.path, the first of a name winning, as import would find it."""
    found = {}
    for folder in sys.path:
        try:
            entries = os.listdir(folder or ".")
        except OSError:
            continue
        for entry in entries:
            match = INSTALLED.match(entry)
            if match:
                found.setdefault(normalized(match.group(1)), match.group(2))
    return found


def package_folder(name):
    for folder in sys.path:
        candidate = os.path.join(folder or ".", name)
        if os.path.isfile(os.path.join(candidate, "__init__.py")):
            return candidate
    return None


versions = installed()
torch_folder = package_folder("torch")
if torch_folder:
    torch = {"version": versions.get("torch"), "cuda": None, "path": torch_folder}
    try:
        with open(os.path.join(torch_folder, "version.py")) as f:
            text = f.read(20000)
        found = re.search(r"^cuda\s*(?::\s*\S+\s*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
        torch["cuda"] = found.group(1) if found else None
        found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
        torch["version"] = (found.group(1) if found else None) or torch["version"]
    except OSError:
        pass
    facts["packages"]["torch"] = torch

for name in sorted(versions):
    if re.fullmatch(r"cupy(-cuda\d+x?|-rocm.*)?", name):
        # cupy-cuda12x: any CUDA 12; cupy-cuda117: CUDA 11.7; cupy-cuda110: 11.0
        major = re.search(r"cuda(\d+)x$", name)
        exact = re.search(r"cuda(\d\d)(\d)$", name)
        cuda = major.group(1) if major else ("%s.%s" % (exact.group(1), exact.group(2)) if exact else None)
        facts["packages"]["cupy"] = {"version": versions[name], "cuda": cuda, "distribution": name}
    elif re.fullmatch(r"nvidia-cuda-runtime(-cu\d+)?", name):
        facts["packages"]["cuda-runtime"] = {"version": versions[name], "distribution": name}
print(json.dumps(facts))
