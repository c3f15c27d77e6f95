// Per-thread stacks of external correlation ids (cuptiActivityPush/PopExternalCorrelationId).
// Work enqueued by a thread while it has ids pushed yields one EXTERNAL_CORRELATION record per kind
// with a non-empty stack, pairing the innermost id with the work's correlation id.
#pragma once

#include <cupti_activity.h>

#include <cstdint>

#include "record_translation.h"

namespace tbdsim::cupti {

bool valid_external_kind(CUpti_ExternalCorrelationKind kind);
void push_external_id(CUpti_ExternalCorrelationKind kind, uint64_t id);
// False when the calling thread has no id of this kind pushed.
bool pop_external_id(CUpti_ExternalCorrelationKind kind, uint64_t* last_id);
// Adds the calling thread's correlation records for work with `correlation_id`.
void add_external_correlations_of_this_thread(uint32_t correlation_id, RecordBytes& out);

// The calling thread's innermost id of each kind at one moment: a runtime API record is described by
// the ids in force when its call began, not by those a tool pushed inside it (around the driver call).
struct ExternalIds {
    uint32_t nonempty = 0;  // bit k: an id of kind k was pushed
    uint64_t top[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE] = {};
};
ExternalIds external_ids_of_this_thread();
void add_external_correlations(const ExternalIds& ids, uint32_t correlation_id, RecordBytes& out);

}  // namespace tbdsim::cupti
