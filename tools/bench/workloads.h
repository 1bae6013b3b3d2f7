// listen_load workloads. Each one drives the io_context until it is done (bounded in time) and
// prints a single JSON line with its results on stdout. Returns the process exit status.
#pragma once

#include "load_common.h"

#include <asio.hpp>

namespace bench {

// W6: N listen streams on one key, one put through another connection, delivery latency to all.
int runFanout(asio::io_context& io, const Args& args);
// W7: N idle listen streams: server RSS per stream, idle server CPU, GET / latency meanwhile,
// then as many more streams as asked (up to the open-file limit) and the errors seen.
int runIdle(asio::io_context& io, const Args& args);
// W5: POST put throughput on keep-alive connections at a fixed concurrency, counts by status.
int runPut(asio::io_context& io, const Args& args);

asio::ip::tcp::endpoint endpointOf(const Args& args);
// A random value JSON whose base64 `data` is `marker` (24 base64 characters, canonical).
std::string valueJson(const std::string& marker, const std::string& id);
std::string randomMarker();
std::string postRequest(const std::string& key, const std::string& body);

} // namespace bench
