// `tbdprof whatif TRACE ...`: the option table (names, help, usage), each given option applied by the
// analyzer (apply_whatif_option: what it means), the prediction rendered by the analyzer
// (render_whatif) and written out.
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <tbdprof/analyzer/render.h>
#include <tbdprof/analyzer/units.h>
#include <tbdprof/analyzer/whatif.h>
#include <tbdprof/cmdline/command.h>
#include <tbdprof/trace/safe_text.h>

#include "analysis_options.h"
#include "subcommands.h"

namespace tbdprof::cli {
// The code moved here from the analyzer with the option tables; it names the analyzer's types as
// it did there.
using namespace tbdprof::analyzer;

namespace {

// Each option's value word as given, by name; what it means is the analyzer's (apply_whatif_option).
using WhatIfWords = std::map<std::string, std::string, std::less<>>;

// Each option given, applied; an error sentence for the first bad one.
std::string apply_words(const CLI::App& app, const WhatIfWords& words, WhatIfOptions& options) {
    for (const std::string_view name : whatif_option_names()) {
        if (app.count(std::string(name)) == 0) continue;
        if (std::string error = apply_whatif_option(name, words.find(name)->second, options); !error.empty())
            return error;
    }
    return {};
}

void add_whatif_options(CLI::App& app, WhatIfWords& w) {
    app.add_option("--batch-size", w["--batch-size"], "the batch size to predict")->option_text("N");
    app.add_option("--batch-size-recorded", w["--batch-size-recorded"], "the recorded run's batch size")
        ->option_text("N");
    app.add_option("--batch-scale", w["--batch-scale"], "the batch scaled by X instead of given sizes")
        ->option_text("X");
    app.add_option("--calibrate", w["--calibrate"], "the same program recorded at another batch size")
        ->option_text("OTHER_TRACE");
    app.add_option("--calibrate-batch-size", w["--calibrate-batch-size"], "the calibration run's batch size")
        ->option_text("N");
    app.add_option("--precision", w["--precision"],
                   "bf16|fp16: autocast-style mixed precision (FP32 weights, GEMMs in P); bf16-pure|fp16-pure: "
                   "weights, gradients, activations stored in P with an FP32 master copy; fp32")
        ->option_text("P");
    app.add_option("--precision-recorded", w["--precision-recorded"],
                   "the recorded run's precision (default: from its GEMM operand types)")
        ->option_text("P");
    app.add_option("--zero", w["--zero"], "ZeRO stage: 1 optimizer state, 2 also gradients, 3 also weights")
        ->option_text("1|2|3");
    app.add_option("--ranks", w["--ranks"], "ranks the ZeRO stage shards over")->option_text("N");
    app.add_option("--zero-bucket", w["--zero-bucket"], "ZeRO's reduce-scatter and all-gather bucket (default 25MiB)")
        ->option_text("SIZE");
    app.add_option("--zero-partition", w["--zero-partition"],
                   "how ZeRO shards: even (default), or whole tensors largest first (ZeroRedundancyOptimizer)")
        ->option_text("even|tensors");
    app.add_option("--checkpoint", w["--checkpoint"],
                   "activation checkpointing: one checkpoint per K layers, or per sqrt(layers)")
        ->option_text("every-K-layers|sqrt");
    app.add_option("--device-memory", w["--device-memory"], "memory of one device (default: the trace's)")
        ->option_text("SIZE");
}

}  // namespace

int whatif_command(int argc, char** argv) {
    cmdline::Command command(
        "whatif",
        "tbdprof whatif TRACE [--batch-size N --batch-size-recorded M | --batch-scale X]\n"
        "       [--calibrate OTHER_TRACE --calibrate-batch-size K] [--precision bf16|fp16|bf16-pure|fp16-pure|fp32]\n"
        "       [--checkpoint every-K-layers|sqrt] [--zero 1|2|3 --ranks N] [--zero-partition even|tensors]\n"
        "       [--device-memory 80GiB]\n"
        "       [--format text|markdown|json|html] [-o FILE]",
        "The peak device memory of a recorded run at another batch size, precision, ZeRO\n"
        "sharding or activation checkpointing, from its tagged timeline of allocations replayed (docs/whatif.md).");
    CLI::App& app = command.app();
    WhatIfWords words;
    WhatIfOptions options;
    std::string format = "text", output;
    bool force = false;
    command.add_format(format, {"text", "markdown", "json", "html"}, "text (default), markdown, json or html");
    command.add_output(output);
    command.add_force(force);
    add_whatif_options(app, words);
    if (const auto status = command.parse(argc, argv)) return *status;
    const std::vector<std::string>& inputs = command.positional();
    if (inputs.size() != 1) return command.usage_error("give exactly one trace file (see tbdprof whatif --help)");
    if (std::string error = apply_words(app, words, options); !error.empty()) return command.usage_error(error);
    WhatIfResult result;
    try {
        result = predict_memory(inputs[0], options);
    } catch (const std::invalid_argument& e) {
        return command.usage_error(e.what());
    } catch (const std::exception& e) {
        return command.fail(e.what(), 2);
    }
    const std::string text = render_whatif(result, *parse_format(format));
    std::vector<std::string> read = inputs;
    if (!options.calibrate_path.empty()) read.push_back(options.calibrate_path);
    if (std::string error = write_output(
            output, format == "json" || format == "html" ? trace::valid_utf8(text) : trace::printable(text), force,
            read);
        !error.empty())
        return command.fail(error, 2);
    return result.cannot_predict.empty() ? 0 : 3;
}

}  // namespace tbdprof::cli
