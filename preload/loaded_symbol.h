// Finding a library entry point in every loaded object, for libraries outside the global scope.
#pragma once

namespace tbdprof::preload {

// The first definition of `name` among the loaded objects (in load order) that is not this preload's
// own; nullptr when none defines it. Slow (walks every loaded object): for a first lookup only.
void* find_in_loaded_libraries(const char* name);

}  // namespace tbdprof::preload
