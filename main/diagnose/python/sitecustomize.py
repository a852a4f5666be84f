# gpu-workbench diagnose: PyTorch's allocator history, recorded without the program being edited.
#
# Put first on PYTHONPATH for one re-run of the program. When the program imports torch, this turns on
# torch.cuda.memory._record_memory_history and attaches an out-of-memory observer that dumps the snapshot
# (GPU_WORKBENCH_SNAPSHOT) as the allocation fails, before the exception unwinds what was alive. What it did
# is written as JSON lines to GPU_WORKBENCH_SHIM_NOTES. Then the program's own sitecustomize, if any, runs.
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
_SNAPSHOT = os.environ.get("GPU_WORKBENCH_SNAPSHOT", "")
_NOTES = os.environ.get("GPU_WORKBENCH_SHIM_NOTES", "")
_ENTRIES = int(os.environ.get("GPU_WORKBENCH_HISTORY_ENTRIES", "100000"))


def _note(kind, **fields):
    if not _NOTES:
        return
    try:
        with open(_NOTES, "a") as notes:
            notes.write(json.dumps(dict(kind=kind, time=time.time(), pid=os.getpid(), **fields)) + "\n")
    except OSError:
        pass


def _arm(torch):
    try:
        torch.cuda.memory._record_memory_history(max_entries=_ENTRIES)
    except Exception as error:  # an old PyTorch, or no CUDA: the program runs as it is
        _note("history-unavailable", error=repr(error)[:500])
        return
    def on_out_of_memory(device, requested, device_allocated, device_free):
        # Every out-of-memory replaces the last (a program that catches them ends on the one that mattered); written
        # beside and renamed, so another process of the program (a DDP rank) never leaves a torn file.
        part = "%s.%d.part" % (_SNAPSHOT, os.getpid())
        try:
            torch.cuda.memory._dump_snapshot(part)
            os.replace(part, _SNAPSHOT)
            _note("snapshot", device=device, requested=requested, allocated=device_allocated, free=device_free, path=_SNAPSHOT)
        except Exception as error:
            _note("snapshot-failed", error=repr(error)[:500])

    try:
        torch._C._cuda_attach_out_of_memory_observer(on_out_of_memory)
        _note("armed", torch=torch.__version__, entries=_ENTRIES)
    except Exception as error:
        _note("observer-unavailable", error=repr(error)[:500])


class _TorchImportHook(importlib.abc.MetaPathFinder):
    """Lets `import torch` happen as it would, then arms the history once torch has finished importing."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            _arm(module)

        spec.loader.exec_module = exec_module
        return spec


if _SNAPSHOT:
    sys.meta_path.insert(0, _TorchImportHook())

# The program sees the path it would have seen, and its own sitecustomize still runs.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
_own = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
if _own is not None and _own.loader is not None:
    _module = importlib.util.module_from_spec(_own)
    sys.modules["sitecustomize"] = _module
    _own.loader.exec_module(_module)
