// Loads the library named by argv[1] (static_runtime_library.cu) and asks it for the device count:
// exit 0 when it answered.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        std::fprintf(stderr, "static_runtime_loader: %s\n", dlerror());
        return 2;
    }
    auto devices = reinterpret_cast<int (*)()>(dlsym(library, "tbd_static_runtime_devices"));
    const int count = devices != nullptr ? devices() : -1;
    std::printf("devices: %d\n", count);
    return count > 0 ? 0 : 1;
}
