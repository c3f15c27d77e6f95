// Runs the real-data tests on the folder given as argv[1] (../shared/validation-data), or exits 77 --
// which ctest reports as skipped -- when that folder is absent.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>

std::string g_validation_data;  // read by validation_test.cpp

int main(int argc, char** argv) {
    if (argc < 2 || !std::filesystem::is_directory(argv[1])) {
        std::printf("SKIPPED: validation data folder %s is absent (real Kineto traces are read from "
                    "../shared/validation-data next to the repository)\n",
                    argc < 2 ? "(not given)" : argv[1]);
        return 77;
    }
    g_validation_data = argv[1];
    doctest::Context context;
    context.applyCommandLine(argc - 1, argv + 1);
    return context.run();
}
