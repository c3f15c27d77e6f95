// The image parser on nvcc's output, without the driver.
#include <doctest/doctest.h>

#include "module_image.h"

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace tbdsim::driver;

namespace {
std::vector<char> read(const std::string& name) {
    std::ifstream in(std::string(TEST_FATBIN_DIR) + "/" + name, std::ios::binary);
    REQUIRE(in.good());
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
}  // namespace

TEST_CASE("a fat binary's cubin gives kernels, parameters, registers and globals") {
    auto bytes = read("test_kernels_sm90.fatbin");
    ImageError error = ImageError::None;
    auto image = parse_module_image(bytes.data(), error);
    REQUIRE(image.has_value());
    CHECK(image_runs_on(*image, 90));
    CHECK_FALSE(image_runs_on(*image, 80));
    CHECK(image_runs_on(*image, 100));  // not the sm_90 cubin, but the compute_90 PTX (JIT)
    REQUIRE_EQ(image->kernels.size(), 2u);
    bool saw_axpy = false;
    for (const auto& k : image->kernels) {
        if (k.name != "_Z4axpyfPKfPfi") continue;
        saw_axpy = true;
        REQUIRE_EQ(k.params.size(), 4u);
        CHECK_EQ(k.params[3].offset, 24u);
        CHECK_EQ(k.params[3].size, 4u);
        CHECK_GT(k.registers, 0u);
    }
    CHECK(saw_axpy);
    REQUIRE_EQ(image->globals.size(), 1u);
    CHECK_EQ(image->globals[0].name, "device_counter");
    CHECK_EQ(image->globals[0].size, 64u);
}

TEST_CASE("PTX parameter lists") {
    const char* ptx =
        ".version 8.0\n.target sm_90\n.visible .entry k(\n .param .u64 k_param_0,\n"
        " .param .f32 k_param_1,\n .param .align 8 .b8 k_param_2[24]\n)\n{\n ret;\n}\n";
    ModuleImage image;
    REQUIRE(parse_ptx(ptx, std::string(ptx).size(), image));
    REQUIRE_EQ(image.kernels.size(), 1u);
    const auto& p = image.kernels[0].params;
    REQUIRE_EQ(p.size(), 3u);
    CHECK_EQ(p[0].offset, 0u);
    CHECK_EQ(p[1].offset, 8u);
    CHECK_EQ(p[1].size, 4u);
    CHECK_EQ(p[2].offset, 16u);
    CHECK_EQ(p[2].size, 24u);
}

TEST_CASE("garbage is refused") {
    std::vector<char> junk(256, 'x');
    junk.back() = 0;
    ImageError error = ImageError::None;
    CHECK_FALSE(parse_module_image(junk.data(), error).has_value());
    CHECK(error == ImageError::InvalidImage);
    CHECK_FALSE(parse_module_image(nullptr, error).has_value());
}
