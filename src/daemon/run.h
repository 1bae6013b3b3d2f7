// The two ways the dhtgate daemon runs, each until SIGINT/SIGTERM, then a clean stop: listen
// streams get their final chunk, then the DHT node leaves. Both return the process exit code.
#pragma once

#include "daemon/options.h"
#include "dhtgate/logger.h"

namespace dhtgate::daemon {

/// Default (--threads 1 without --dht-thread): one io_context on the calling thread runs the HTTP
/// server, the DHT node (DhtDriver: no DHT thread) and the signal handling.
int runDriven(const Options& options, const Logger& log);

/// --dht-thread or --threads N > 1: a threaded DhtRunner and the ProxyServer's own io thread(s);
/// the calling thread waits for the signal.
int runThreaded(const Options& options, const Logger& log);

} // namespace dhtgate::daemon
