"""Where the simulated GPU's libraries are, next to a tbdprof binary.

Two layouts hold them: a build tree (bin/tbdprof, lib/simgpu/) and an installed tree or the
real-GPU bundle (bin/tbdprof, lib/tbdprof/simgpu/, kept private so that the simulated libcuda.so.1
never lands on the loader's default path). The first that holds libcuda.so.1 is the answer.
"""
import os

_LAYOUTS = (("lib", "simgpu"), ("lib", "tbdprof", "simgpu"))


def simgpu_libraries(tbdprof):
    """The folder of simulated libraries beside TBDPROF, or None when neither layout has one."""
    prefix = os.path.join(os.path.dirname(os.path.abspath(tbdprof)), "..")
    for layout in _LAYOUTS:
        folder = os.path.normpath(os.path.join(prefix, *layout))
        if os.path.isfile(os.path.join(folder, "libcuda.so.1")):
            return folder
    return None


def with_simgpu_first(env, tbdprof):
    """A copy of ENV whose LD_LIBRARY_PATH starts with the simulated libraries (ValueError: none)."""
    folder = simgpu_libraries(tbdprof)
    if folder is None:
        raise ValueError(f"no simulated GPU libraries beside {tbdprof} (lib/simgpu or lib/tbdprof/simgpu)")
    out = dict(env)
    out["LD_LIBRARY_PATH"] = ":".join(p for p in (folder, env.get("LD_LIBRARY_PATH")) if p)
    return out
