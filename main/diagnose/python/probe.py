# gpu-workbench diagnose: what CUDA the program's Python will use, read without importing torch or cupy
# (importing them starts CUDA, slowly). Prints one JSON object.
import importlib.metadata as metadata
import importlib.util
import json
import os
import re
import sys

facts = {"python": sys.version.split()[0], "executable": sys.executable, "packages": {}}


def version_of(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
    except Exception:
        return None


try:
    spec = importlib.util.find_spec("torch")
except Exception:
    spec = None
if spec is not None and spec.origin:
    torch = {"version": version_of("torch"), "cuda": None, "path": os.path.dirname(spec.origin)}
    try:
        with open(os.path.join(os.path.dirname(spec.origin), "version.py")) as f:
            text = f.read(20000)
        found = re.search(r"^cuda\s*(?::\s*\S+\s*)?=\s*['\"]([^'\"]+)['\"]", text, re.M)
        torch["cuda"] = found.group(1) if found else None
        found = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)['\"]", text, re.M)
        torch["version"] = torch["version"] or (found.group(1) if found else None)
    except OSError:
        pass
    facts["packages"]["torch"] = torch

names = set()
try:
    names = {(d.metadata["Name"] or "").lower() for d in metadata.distributions()}
except Exception:
    pass
for name in sorted(names):
    if re.fullmatch(r"cupy(-cuda\d+x?|-rocm.*)?", name):
        # cupy-cuda12x: any CUDA 12; cupy-cuda117: CUDA 11.7; cupy-cuda110: 11.0
        major = re.search(r"cuda(\d+)x$", name)
        exact = re.search(r"cuda(\d\d)(\d)$", name)
        cuda = major.group(1) if major else ("%s.%s" % (exact.group(1), exact.group(2)) if exact else None)
        facts["packages"]["cupy"] = {"version": version_of(name), "cuda": cuda, "distribution": name}
    elif re.fullmatch(r"nvidia-cuda-runtime(-cu\d+)?", name):
        facts["packages"]["cuda-runtime"] = {"version": version_of(name), "distribution": name}
print(json.dumps(facts))
