// libnvrtc-builtins.so.13: NVRTC's private helper library, with no public API. The simulated NVRTC
// needs none; this empty library exists so that torch/__init__.py, which loads
// libnvrtc-builtins.so.* by path from site-packages, finds the simulated folder's (tbdprof --sim
// mirrors it first on PYTHONPATH) instead of mapping NVIDIA's. It exports nothing.
