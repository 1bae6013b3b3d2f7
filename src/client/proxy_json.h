// Decoding of the proxy's node-info and stats bodies (spec §4.4, §4.5).
#pragma once

#include "dhtgate/proxy_client.h"

#include <string_view>

namespace dhtgate::detail {

/// False when the body is not a JSON object with a `node_id` string (a client treats such an
/// answer as a failure, spec §11.3). Unknown members are ignored.
bool parseNodeInfo(std::string_view body, NodeInfo& out);
/// False when the body is not a JSON object. Missing counters stay 0.
bool parseStats(std::string_view body, ProxyStats& out);

} // namespace dhtgate::detail
