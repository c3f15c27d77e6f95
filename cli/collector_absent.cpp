#include "collector_absent.h"

#include <tbdprof/trace/raw_reader.h>

#include <sys/stat.h>
#include <unistd.h>

namespace tbdprof::cli {
namespace {

std::string base_name(const std::string& path) {
    return path.substr(path.find_last_of('/') + 1);
}

// `env -i ...`, `env - ...`, `env --ignore-environment ...`: the collector's variables are gone.
bool clears_environment(const std::vector<std::string>& command) {
    if (command.empty() || base_name(command[0]) != "env") return false;
    for (size_t i = 1; i < command.size(); ++i) {
        const std::string& arg = command[i];
        if (arg == "-" || arg == "--ignore-environment") return true;
        if (arg.size() > 1 && arg[0] == '-' && arg[1] != '-' && arg.find('i') != std::string::npos) return true;
        if (arg.empty() || arg[0] != '-') break;  // the command env runs
    }
    return false;
}

// The loader runs a setuid/setgid program in secure mode, without LD_PRELOAD (unless it is ours).
bool runs_in_secure_mode(const std::string& program) {
    struct stat st {};
    if (::stat(program.c_str(), &st) != 0) return false;
    return ((st.st_mode & S_ISUID) && st.st_uid != ::geteuid()) || ((st.st_mode & S_ISGID) && st.st_gid != ::getegid());
}

}  // namespace

bool collector_wrote(const std::string& run_dir) {
    std::string error;  // the directory cannot be read: cannot tell, so say nothing
    return !trace::list_raw_files(run_dir, error).empty() || !error.empty();
}

std::string collector_absent_note(const std::vector<std::string>& command, const std::string& program) {
    std::string why;
    if (clears_environment(command))
        why =
            "`env` cleared the environment, and LD_PRELOAD and TBDPROF_RUN_DIR with it; put tbdprof inside: "
            "env -i ... tbdprof -- PROG";
    else if (runs_in_secure_mode(program))
        why = program + " is setuid/setgid, and the dynamic loader ignores LD_PRELOAD for such programs";
    else
        why =
            "likely causes: the command clears its environment (env -i, sudo), runs a setuid/setgid or "
            "statically linked program (LD_PRELOAD is then ignored), or never calls CUDA";
    return "no process of " + base_name(command.empty() ? program : command[0]) +
           " loaded tbdprof's collector or called CUDA, so nothing was recorded: " + why;
}

}  // namespace tbdprof::cli
