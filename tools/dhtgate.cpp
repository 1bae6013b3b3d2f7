// dhtgate: a DHT node plus the HTTP proxy gateway in one process.
//
//   dhtgate [--dht-port N] [--bootstrap HOST:PORT]... [--http-port N] [--bind ADDR] [--threads N] [--dht-thread]
//           [--log-level LEVEL] [--max-pipelined N] [--concurrent-accepts N]
//           [--push-server URL] [--bundle-id ID] [--push-none-platform P] [--state-file PATH]
//           [--identity PATH [--identity-password P] [--identity-create] [--https-port N] [--no-http]]
//
// Stops cleanly on SIGINT/SIGTERM: listen streams get their final chunk, then the DHT node leaves.
#include "daemon/identity_setup.h"
#include "daemon/options.h"
#include "daemon/run.h"

#include <csignal>
#include <iostream>

int main(int argc, char** argv) {
    std::signal(SIGPIPE, SIG_IGN);
    std::string error;
    auto options = dhtgate::daemon::parseOptions(argc, argv, error);
    if (!options) {
        std::cerr << "dhtgate: " << error << "\nTry 'dhtgate --help'.\n";
        return 2;
    }
    if (options->help) {
        std::cout << dhtgate::daemon::usage("dhtgate");
        return 0;
    }
    const auto log = dhtgate::Logger::toStderr(options->log_level);
    {
        bool created = false;
        if (!dhtgate::daemon::setupIdentity(*options, options->server.identity, error, &created)) {
            std::cerr << "dhtgate: " << error << "\n";
            return 1;
        }
        if (created)
            log.info("[daemon] created identity {}.pem / {}.crt", options->identity, options->identity);
    }

    // Default: HTTP server, DHT node and signals on one io thread (this one), no hand-offs.
    // --dht-thread or a pool: the threaded DhtRunner (docs/server.md, "DHT driven on the io thread").
    if (options->dht_thread || options->server.threads > 1)
        return dhtgate::daemon::runThreaded(*options, log);
    return dhtgate::daemon::runDriven(*options, log);
}
