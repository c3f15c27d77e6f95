"""Imports PyTorch, queries the device and allocates on it, then prints the device and every mapped
library whose name is one of NVIDIA's (one `mapped PATH` line each), for run_case.sh to check."""
import torch

print("available", torch.cuda.is_available())
print("device", torch.cuda.get_device_name())
(torch.ones(256, device="cuda") * 2).cpu()
NVIDIA_PREFIXES = ("libcuda.", "libcudart", "libcublas", "libcudnn", "libcupti", "libcurand", "libcufft", "libcusparse",
                   "libcusolver", "libcufile", "libnvrtc", "libnvJitLink", "libnccl", "libnvshmem", "libnvidia-ml")
with open("/proc/self/maps") as maps:
    paths = {line.split()[-1] for line in maps if len(line.split()) >= 6}
for path in sorted(paths):
    if path.rsplit("/", 1)[-1].startswith(NVIDIA_PREFIXES):
        print("mapped", path)
