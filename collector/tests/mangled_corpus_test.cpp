// The Itanium-grammar parse of kernel parameter lists, on a corpus of real-style mangled CUDA kernel
// names: PyTorch-like templated elementwise kernels with lambdas (local names, closure types),
// batch-norm/layer-norm kernels whose repeated `T const*` come back as substitutions (S6_), cub
// kernels (inline namespaces, policies, non-type arguments), cutlass-like kernels (deep template
// nesting, dependent `typename Op::Params`), cuDNN/Caffe-like kernels, expressions in template
// arguments (XT_E, Xst, Xml, array bounds), literals, packs, decltype return types, references,
// function and member pointers, volatile and restrict, std:: abbreviations, clone suffixes. Each
// entry's expectation is one letter per parameter: C pointer to const, P other pointer, . not a
// pointer. The names come from compiling such kernels with the Itanium ABI (as nvcc's host side
// does); the expectations are checked again here against __cxa_demangle's text, independently of the
// parser.
#include <cxxabi.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tbdprof/collector/itanium_parameters.h"
#include "tbdprof/collector/mangled_params.h"

using tbdprof::collector::const_pointer_parameters;
using tbdprof::collector::parse_mangled_parameters;

namespace {

struct Entry {
    const char* mangled;
    const char* expected;
};

const Entry kCorpus[] = {
    {"_ZN2at6native11fill_kernelIPKfEEvPT_S4_l", "PC."},
    {"_ZN2at6native12_GLOBAL__N_129vectorized_elementwise_kernelILi4EZZNS1_15add_kernel_cudaERNS_"
     "18TensorIteratorBaseEENKUlvE0_clEvEUlN3c104HalfES7_E_NS_6detail5ArrayIPcLi2EEEEEviT0_T1_",
     "..."},
    {"_ZN2at6native12_GLOBAL__N_129vectorized_elementwise_kernelILi4EZZZNS1_15add_kernel_cudaERNS_"
     "18TensorIteratorBaseEENKUlvE_clEvENKUlvE_clEvEUlfE_NS_6detail5ArrayIPcLi2EEEEEviT0_T1_",
     "..."},
    {"_ZN2at6native12index_kernelIfLi4EEEvPT_PKS2_PKPKlSt5arrayIlLm4EE", "PCC."},
    {"_ZN2at6native19layer_norm_backwardIN3c108BFloat16EfEEvPKT_S6_PKT0_S9_S6_PS4_l", "CCCCCP."},
    {"_ZN2at6native20softmax_warp_forwardIN3c104HalfEEEvPT_PKS4_iiiPKb", "PC...C"},
    {"_ZN2at6native36batch_norm_collect_statistics_kernelIN3c104HalfEfiEEvPKT_PKT1_T0_SA_PS4_S6_S9_", "CC..PCC"},
    {"_ZN2at6native36batch_norm_collect_statistics_kernelIfflEEvPKT_PKT1_T0_S8_PS2_S4_S7_", "CC..PCC"},
    {"_ZN3cub17CUB_200200_900_NS16DeviceScanKernelINS0_9BlockLoadIfLi128EEEPKiNS0_13ScanTileStateIiLb1EEEEEvT0_PS8_T1_"
     "i",
     "CP.."},
    {"_ZN3cub17CUB_200200_900_NS18DeviceReduceKernelINS0_18DeviceReducePolicy9Policy600ILi3EEEPKfPfiNS0_3SumEEEvT0_T1_"
     "T2_T3_",
     "CP.."},
    {"_ZN3cub17CUB_200200_900_NS29DeviceRadixSortOnesweepKernelIfijLb0EEEvPT1_S3_PKS2_PKT_PS6_PKT0_PSA_S2_ii",
     "PPCCPCP..."},
    {"_ZN3tbd10fixed_tileILi8EEEvPAplT_Li1E_KfPf", "CP"},
    {"_ZN3tbd10member_ptrEMNS_5LayerEfPKS0_", ".C"},
    {"_ZN3tbd11pack_kernelIJfKdEEEvPKiDpPT_", "CPC"},
    {"_ZN3tbd12_GLOBAL__N_111anon_kernelEPKdPd", "CP"},
    {"_ZN3tbd13volatile_ptrsEPViPVKiPi", "PCP"},
    {"_ZN3tbd25multi_tensor_apply_kernelIfLl4EEEvlPKPKT_S1_", ".C."},
    {"_ZN3tbd4litsILb1ELln3EEEvPKlPb", "CP"},
    {"_ZN3tbd4refsERKfRfPS0_", "..C"},
    {"_ZN3tbd6deduceIfEEDTplixfp_Li0Eixfp0_Li0EEPKT_PS2_", "CP"},
    {"_ZN3tbd6halvesEPK6__halfS2_PS0_PK13__nv_bfloat16PS4_", "CCPCP"},
    {"_ZN3tbd7arr_refILj3EEEvRAT__KfPf", ".P"},
    {"_ZN3tbd7big_vecILi4ELi0EEEvPKfPf", "CP"},
    {"_ZN3tbd7stringsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPKcSt4pairIPKfPfE", ".C."},
    {"_ZN3tbd8apply_opINS_4PlusEfEEvT_IT0_EPKS3_PS3_", ".CP"},
    {"_ZN3tbd8callbackEPFvPKfEPKS1_Pf", ".CP"},
    {"_ZN3tbd8char_litILc120EEEvPKc", "C"},
    {"_ZN3tbd8repeatedEPKiS1_S1_PiS1_l", "CCCPC."},
    {"_ZN3tbd9complex_kEPKN3c107complexIfEEPS2_PKNS1_IdEE", "CPC"},
    {"_ZN3tbdL13static_kernelEPKfPf", "CP"},
    {"_ZN4tbd210arr_kernelILi3EEEvN2at6detail5ArrayIPKfXT_EEEPfPKi", ".PC"},
    {"_ZN4tbd25sizedIdEEvSt5arrayIfXstT_EEPKS2_PS2_", ".CP"},
    {"_ZN4tbd28vec_loadIfLi4EEEvN2at6detail5ArrayIT_XmlT0_Li2EEEEPKS4_PS4_", ".CP"},
    {"_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_12MmaPipelinedINS1_9GemmShapeILi128ELi128ELi32EEENS_"
     "6layout8RowMajorEEENS_8epilogue17LinearCombinationINS_6half_tELi8EEENS_4arch4Sm80ELb0EEEEEvNT_6ParamsE",
     "."},
    {"_ZN7cutlass7Kernel2INS_3Op2EEEvNT_6ParamsEPKNS2_8ElementAE", ".C"},
    {"_ZNK3tbd7FunctorclIfEEvPKT_PS2_", "CP"},
    {"_Z10add_kernelPfPKfS1_i", "PCC."},
    {"_Z13reduce_kernelILi256EEvPKfPfi.isra.0", "CP."},
    {"_Z16gather_kernel_v2PKiS0_PKfPfS0_S0_i", "CCCPCC."},
    {"_ZN6caffe212_GLOBAL__N_117im2col_gpu_kernelIfEEviPKT_iiiiiiiiiiiiiPS2_", ".C.............P"},
    {"_ZN5cudnn6detail23implicit_convolve_sgemmIffLi1024ELi5ELi5ELi3ELi3ELi3ELi1ELb1ELb0ELb1EEEviiiPKT_iPS2_S4_"
     "18kernel_conv_paramsyiffiS4_S4_ii",
     "...C.PC......CC.."},
};

std::string kinds(const char* mangled) {
    const auto signature = parse_mangled_parameters(mangled);
    if (!signature.understood) return "(not understood)";
    std::string out;
    for (size_t i = 0; i < signature.count; ++i) {
        const auto& p = signature.parameters[i];
        out += p.pointer_to_const ? 'C' : p.pointer ? 'P' : '.';
    }
    return out;
}

bool ends_with(const std::string& text, const std::string& end) {
    return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// The parameters of a demangled signature: the last top-level parenthesised group, split at commas
// outside any brackets (angle brackets only outside parentheses: expressions may hold '>').
std::vector<std::string> demangled_parameters(std::string text) {
    const size_t clone = text.find(" [clone");
    if (clone != std::string::npos) text.resize(clone);
    for (const char* suffix : {" const", " volatile", " &&", " &"}) {
        if (ends_with(text, suffix)) text.resize(text.size() - std::string(suffix).size());
    }
    REQUIRE(!text.empty());
    REQUIRE(text.back() == ')');
    int depth = 0;
    size_t open = text.size();
    for (size_t i = text.size(); i-- > 0;) {
        if (text[i] == ')') ++depth;
        if (text[i] == '(' && --depth == 0) {
            open = i;
            break;
        }
    }
    REQUIRE(open < text.size());
    std::vector<std::string> out;
    std::string current, stack;
    for (char c : text.substr(open + 1, text.size() - open - 2)) {
        if (c == '(' || c == '[' || c == '{')
            stack += c;
        else if ((c == ')' || c == ']' || c == '}') && !stack.empty())
            stack.pop_back();
        else if (c == '<' && (stack.empty() || stack.back() == '<'))
            stack += c;
        else if (c == '>' && !stack.empty() && stack.back() == '<')
            stack.pop_back();
        if (c == ',' && stack.empty()) {
            out.push_back(current);
            current.clear();
        } else {
            current += c;
        }
    }
    if (!current.empty()) out.push_back(current);
    for (std::string& p : out) {
        while (!p.empty() && p.front() == ' ') p.erase(p.begin());
    }
    if (out.size() == 1 && out[0] == "void") out.clear();
    return out;
}

char demangled_kind(std::string p) {
    for (bool trimmed = true; trimmed;) {
        trimmed = false;
        for (const char* q : {" __restrict__", " restrict", " const", " volatile"}) {
            if (ends_with(p, q)) {
                p.resize(p.size() - std::string(q).size());
                trimmed = true;
            }
        }
    }
    if (ends_with(p, "::*")) return '.';                         // a pointer to member: an offset, no data
    if (p.find("const (*) [") != std::string::npos) return 'C';  // a pointer to an array of const
    if (p.find("(*) [") != std::string::npos) return 'P';
    if (ends_with(p, "const*") || ends_with(p, "const volatile*")) return 'C';
    if (ends_with(p, "*") && !ends_with(p, "(*)")) return 'P';
    return '.';
}

}  // namespace

TEST_CASE("mangled kernel corpus: pointer-to-const per parameter") {
    CHECK(sizeof kCorpus / sizeof kCorpus[0] >= 40);
    for (const Entry& e : kCorpus) {
        INFO(std::string(e.mangled));
        CHECK(kinds(e.mangled) == std::string(e.expected));
        uint64_t mask = 0;
        for (size_t i = 0; e.expected[i] != '\0'; ++i) {
            if (e.expected[i] == 'C') mask |= uint64_t{1} << i;
        }
        CHECK(const_pointer_parameters(e.mangled) == mask);
    }
}

TEST_CASE("mangled kernel corpus: expectations agree with __cxa_demangle") {
    for (const Entry& e : kCorpus) {
        INFO(std::string(e.mangled));
        int status = 0;
        char* text = abi::__cxa_demangle(e.mangled, nullptr, nullptr, &status);
        REQUIRE(status == 0);
        REQUIRE(text != nullptr);
        const std::vector<std::string> parameters = demangled_parameters(text);
        std::free(text);
        std::string from_text;
        for (const std::string& p : parameters) from_text += demangled_kind(p);
        CHECK(from_text == std::string(e.expected));
    }
}

TEST_CASE("names outside the grammar are not understood, never guessed") {
    for (const char* name :
         {"plain_c_kernel", "gemv2T_kernel_val", "_Z", "_ZN3tbd", "_Z3fooPK", "_Z3fooS9_", "_ZThn8_N3tbd1X1fEv",
          "_ZTV3Foo", "_ZGVZ4mainE1x", "_ZZ4mainE1x", "_Z3fooIiEvT0_IE", "_Z1fIXadL_Z1gvEEEvv_", "_Z3fooPA"}) {
        INFO(std::string(name));
        CHECK(const_pointer_parameters(name) == 0);
    }
    CHECK_FALSE(parse_mangled_parameters("extern_c_kernel").understood);
    CHECK_FALSE(parse_mangled_parameters(nullptr).understood);
    CHECK(parse_mangled_parameters("_Z1fv").understood);
    CHECK(parse_mangled_parameters("_Z1fv").count == 0);
}

TEST_CASE("deep nesting stays bounded") {
    std::string name = "_Z1f";
    for (int i = 0; i < 5000; ++i) name += "P";
    name += "i";
    CHECK_FALSE(parse_mangled_parameters(name.c_str()).understood);
    std::string args = "_Z1fI";
    for (int i = 0; i < 3000; ++i) args += "N1aI";
    CHECK_FALSE(parse_mangled_parameters(args.c_str()).understood);
}

TEST_CASE("every truncation and one-letter change of the corpus parses or gives up without harm") {
    const char alphabet[] = "_0123456789SNIEKPRTXLJZDpUlvfi";
    size_t variants = 0;
    for (const Entry& e : kCorpus) {
        const std::string name = e.mangled;
        for (size_t cut = 0; cut < name.size(); ++cut) {
            const auto signature = parse_mangled_parameters(name.substr(0, cut).c_str());
            CHECK(signature.count <= tbdprof::collector::kMaxMangledParameters);
            ++variants;
        }
        for (size_t i = 0; i < name.size(); ++i) {
            for (const char* c = alphabet; *c != '\0'; ++c) {
                std::string changed = name;
                changed[i] = *c;
                const auto signature = parse_mangled_parameters(changed.c_str());
                CHECK(signature.count <= tbdprof::collector::kMaxMangledParameters);
                ++variants;
            }
        }
    }
    CHECK(variants > 50000);
}
