// dhtgate: a DHT node plus the HTTP proxy gateway in one process.
//
//   dhtgate [--dht-port N] [--bootstrap HOST:PORT]... [--http-port N] [--bind ADDR] [--threads N]
//           [--log-level LEVEL] [--max-pipelined N] [--concurrent-accepts N]
//           [--push-server URL] [--bundle-id ID] [--push-none-platform P] [--state-file PATH]
//           [--identity PATH [--identity-password P] [--identity-create] [--https-port N] [--no-http]]
//
// Stops cleanly on SIGINT/SIGTERM: listen streams get their final chunk, then the DHT node leaves.
#include "daemon/identity_setup.h"
#include "daemon/options.h"
#include "dhtgate/proxy_server.h"

#include <asio/io_context.hpp>
#include <asio/signal_set.hpp>
#include <opendht/dhtrunner.h>

#include <csignal>
#include <cstdio>
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

    // Registered before any thread starts; asio turns the signals into a completion on signals_io.
    asio::io_context signals_io;
    asio::signal_set signals(signals_io, SIGINT, SIGTERM);

    auto node = std::make_shared<dht::DhtRunner>();
    try {
        dht::DhtRunner::Config config;
        config.threaded = true;
        // The DHT node deliberately gets no identity, even with --identity: OpenDHT's SecureDht
        // would decrypt values addressed to it and drop other encrypted values from get/listen,
        // and a gateway must relay them verbatim (spec §9).
        node->run(options->dht_port, config);
    } catch (const std::exception& e) {
        std::cerr << "dhtgate: cannot start the DHT node on UDP port " << options->dht_port << ": " << e.what() << "\n";
        return 1;
    }
    for (const auto& b : options->bootstrap) {
        std::string host, port;
        dhtgate::daemon::splitHostPort(b, host, port);
        log.info("[daemon] bootstrapping from {}:{}", host, port);
        node->bootstrap(host, port);
    }

    dhtgate::ProxyServer server(node, options->server, log);
    if (auto ec = server.start()) {
        std::cerr << "dhtgate: cannot serve HTTP on " << options->server.address << ":" << options->server.port;
        if (options->server.https_port)
            std::cerr << " / HTTPS on port " << *options->server.https_port;
        std::cerr << ": " << ec.message() << "\n";
        node->join();
        return 1;
    }
    const bool v6 = options->server.address.find(':') != std::string::npos;
    const auto host = v6 ? "[" + options->server.address + "]" : options->server.address;
    std::cout << "dhtgate " << dhtgate::versionString() << ": serving";
    if (options->server.serve_http)
        std::cout << " http://" << host << ":" << server.port() << "/";
    if (server.httpsPort())
        std::cout << " https://" << host << ":" << server.httpsPort() << "/";
    std::cout << " (DHT node " << node->getNodeId() << ", UDP port " << node->getBoundPort() << ")" << std::endl;

    signals.async_wait([&](const std::error_code& ec, int signo) {
        if (!ec)
            log.info("[daemon] signal {}: shutting down", signo);
    });
    signals_io.run();

    server.stop();
    node->join();
    log.info("[daemon] bye");
    return 0;
}
