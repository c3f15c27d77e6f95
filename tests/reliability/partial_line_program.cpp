// A program whose output is mid-line when the collector has something to say (reliability.partial_lines).
//   partial_line_program MODE
// Every mode writes "[prog:A]" on stdout and "[prog:B]" on stderr without a newline, makes the
// collector speak at its first CUDA call, then writes "[prog:C]" on stdout, again without a newline.
//   held         subscribes to CUPTI first: the collector says that another tool holds it (a message
//                for the end of the run)
//   no-messages  as `held`, with the run directory's messages file made impossible to create (a
//                directory in its place): the collector says it at once instead
//   no-raw-file  the run directory moved away during the first CUDA call: the collector says at once
//                that it cannot record this process
//   broken-pipe  as `no-messages` with stderr a pipe nobody reads: the program must not die of SIGPIPE
//   line         as `held`, but every output ends its line
// Exits 0 when its own CUDA work succeeded.
#include <cuda.h>
#include <cupti_callbacks.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

void say(FILE* stream, const char* text) {
    std::fputs(text, stream);
    std::fflush(stream);
}

std::string run_dir() {
    const char* dir = std::getenv("TBDPROF_RUN_DIR");
    return dir != nullptr ? dir : "";
}

void CUPTIAPI ignore(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

bool hold_cupti() {
    void* cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (cupti == nullptr) return false;
    using Subscribe = CUptiResult (*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
    auto subscribe = reinterpret_cast<Subscribe>(dlsym(cupti, "cuptiSubscribe"));
    CUpti_SubscriberHandle handle = nullptr;
    return subscribe != nullptr && subscribe(&handle, ignore, nullptr) == CUPTI_SUCCESS;
}

bool cuda_work() {
    CUdevice device = 0;
    CUcontext context = nullptr;
    CUdeviceptr memory = 0;
    return cuInit(0) == CUDA_SUCCESS && cuDeviceGet(&device, 0) == CUDA_SUCCESS &&
           cuDevicePrimaryCtxRetain(&context, device) == CUDA_SUCCESS && cuCtxSetCurrent(context) == CUDA_SUCCESS &&
           cuMemAlloc(&memory, 1 << 20) == CUDA_SUCCESS && cuMemsetD8(memory, 7, 1 << 20) == CUDA_SUCCESS &&
           cuMemFree(memory) == CUDA_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    const bool line = mode == "line";
    say(stdout, line ? "[prog:A]\n" : "[prog:A]");
    say(stderr, line ? "[prog:B]\n" : "[prog:B]");
    if (mode == "no-messages" || mode == "broken-pipe") mkdir((run_dir() + "/messages.txt").c_str(), 0755);
    const std::string away = run_dir() + ".away";
    if (mode == "no-raw-file" && std::rename(run_dir().c_str(), away.c_str()) != 0) return 2;
    if (mode == "broken-pipe") {
        int ends[2];
        if (pipe(ends) != 0) return 2;
        close(ends[0]);
        dup2(ends[1], STDERR_FILENO);
        close(ends[1]);
    }
    if (mode != "no-raw-file" && !hold_cupti()) {
        say(stdout, "cannot subscribe to CUPTI\n");
        return 1;
    }
    const bool worked = cuda_work();
    if (mode == "no-raw-file" && std::rename(away.c_str(), run_dir().c_str()) != 0) return 2;
    if (!worked) {
        say(stdout, "CUDA work failed\n");
        return 1;
    }
    say(stdout, line ? "[prog:C]\n" : "[prog:C]");
    return 0;
}
