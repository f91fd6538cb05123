// attn's declaration of tt-metalium/dispatch_core_common.hpp: which cores
// run the command queues' dispatch firmware. attn keeps the SDK's default.
#pragma once

namespace tt::tt_metal {

class DispatchCoreConfig {
public:
    DispatchCoreConfig();
};

}  // namespace tt::tt_metal
