// JUnit XML for CI systems: one test suite per checked trace, one test case per limit.
#include "document.h"
#include "tbdprof/analyzer/budget.h"

namespace tbdprof::analyzer {

std::string junit_xml(const std::string& trace_path, const std::vector<CheckResult>& results) {
    int failures = 0;
    for (const CheckResult& r : results) failures += r.passed ? 0 : 1;
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += "<testsuites name=\"tbdprof check\" tests=\"" + std::to_string(results.size()) + "\" failures=\"" +
           std::to_string(failures) + "\">\n";
    out += "  <testsuite name=\"" + html_escape("tbdprof budget: " + trace_path) + "\" tests=\"" +
           std::to_string(results.size()) + "\" failures=\"" + std::to_string(failures) + "\" errors=\"0\">\n";
    for (const CheckResult& r : results) {
        out += "    <testcase classname=\"tbdprof.budget\" name=\"" + html_escape(r.limit) + "\"";
        if (r.passed) {
            out += ">\n      <system-out>" + html_escape(r.message) + "</system-out>\n    </testcase>\n";
        } else {
            out += ">\n      <failure message=\"" + html_escape(r.message) + "\" type=\"" + html_escape(r.limit) +
                   "\">" + html_escape(r.message) + "</failure>\n    </testcase>\n";
        }
    }
    out += "  </testsuite>\n</testsuites>\n";
    return out;
}

}  // namespace tbdprof::analyzer
