#include "daemon/run.h"

#include "daemon/bootstrap_resolver.h"
#include "dhtgate/dht_driver.h"
#include "dhtgate/proxy_server.h"

#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <asio/signal_set.hpp>
#include <opendht/dhtrunner.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <thread>

namespace dhtgate::daemon {
namespace {

void printServing(const Options& options, const ProxyServer& server, const dht::InfoHash& nodeId,
                  std::uint16_t udpPort) {
    const auto& address = options.server.address;
    const bool v6 = address.find(':') != std::string::npos;
    const auto host = v6 ? "[" + address + "]" : address;
    std::cout << "dhtgate " << versionString() << ": serving";
    if (options.server.serve_http)
        std::cout << " http://" << host << ":" << server.port() << "/";
    if (server.httpsPort())
        std::cout << " https://" << host << ":" << server.httpsPort() << "/";
    std::cout << " (DHT node " << nodeId << ", UDP port " << udpPort << ")" << std::endl;
}

void printStartError(const Options& options, std::error_code ec) {
    std::cerr << "dhtgate: cannot serve HTTP on " << options.server.address << ":" << options.server.port;
    if (options.server.https_port)
        std::cerr << " / HTTPS on port " << *options.server.https_port;
    std::cerr << ": " << ec.message() << "\n";
}

// The DHT node deliberately gets no identity, even with --identity: OpenDHT's SecureDht would
// decrypt values addressed to it and drop other encrypted values from get/listen, and a gateway
// must relay them verbatim (spec §9). DhtDriver never gives it one either.

} // namespace

int runDriven(const Options& options, const Logger& log) {
    asio::io_context io(1);
    asio::signal_set signals(io, SIGINT, SIGTERM);

    std::unique_ptr<DhtDriver> driver;
    try {
        driver = std::make_unique<DhtDriver>(io, options.dht_port, log);
    } catch (const std::exception& e) {
        std::cerr << "dhtgate: cannot start the DHT node on UDP port " << options.dht_port << ": " << e.what() << "\n";
        return 1;
    }
    DhtDriver* drv = driver.get();
    BootstrapResolver bootstrap(
        io, driver->runner(), [drv] { drv->kick(); }, log);
    bootstrap.start(options.bootstrap);

    auto config = options.server;
    config.dht_kick = [drv] { drv->kick(); };
    ProxyServer server(driver->runner(), config, log);
    if (auto ec = server.start(io)) {
        printStartError(options, ec);
        bootstrap.cancel();
        driver->stop();
        return 1;
    }
    printServing(options, server, driver->runner()->getNodeId(), driver->port());

    // ProxyServer::stop() called from another thread waits (while io keeps running here) until the
    // final chunks of the streams are written; then the node leaves and io stops (idle keep-alive
    // connections are closed when the io_context is destroyed).
    std::thread stopper;
    signals.async_wait([&](const std::error_code& ec, int signo) {
        if (ec)
            return;
        log.info("[daemon] signal {}: shutting down", signo);
        stopper = std::thread([&] {
            server.stop();
            asio::post(io, [&] {
                bootstrap.cancel();
                driver->stop();
                io.stop();
            });
        });
    });
    try {
        io.run();
    } catch (const std::exception& e) {
        log.error("[daemon] io loop failed: {}", e.what());
    }
    if (stopper.joinable())
        stopper.join();
    server.stop();
    driver->stop();
    log.info("[daemon] bye");
    return 0;
}

int runThreaded(const Options& options, const Logger& log) {
    // Registered before any thread starts; asio turns the signals into a completion on signals_io.
    asio::io_context signals_io;
    asio::signal_set signals(signals_io, SIGINT, SIGTERM);

    auto node = std::make_shared<dht::DhtRunner>();
    try {
        dht::DhtRunner::Config config;
        config.threaded = true;
        node->run(options.dht_port, config);
    } catch (const std::exception& e) {
        std::cerr << "dhtgate: cannot start the DHT node on UDP port " << options.dht_port << ": " << e.what() << "\n";
        return 1;
    }
    for (const auto& b : options.bootstrap) {
        std::string host, port;
        splitHostPort(b, host, port);
        log.info("[daemon] bootstrapping from {}:{}", host, port);
        node->bootstrap(host, port);
    }

    ProxyServer server(node, options.server, log);
    if (auto ec = server.start()) {
        printStartError(options, ec);
        node->join();
        return 1;
    }
    printServing(options, server, node->getNodeId(), node->getBoundPort());

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

} // namespace dhtgate::daemon
