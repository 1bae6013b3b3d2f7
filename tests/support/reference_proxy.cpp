#include "support/reference_proxy.h"

#include "dhtgate/proxy_client.h"

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/steady_timer.hpp>

#include <csignal>
#include <fcntl.h>
#include <future>
#include <stdexcept>
#include <sys/wait.h>
#include <unistd.h>

namespace dhtgate::test {

LoopbackPeer::LoopbackPeer() {
    dht::DhtRunner::Config config;
    config.dht_config.node_config.network = kNetwork;
    config.threaded = true;
    runner_.run("127.0.0.1", "", "0", config);
    port_ = runner_.getBoundPort(AF_INET);
}

LoopbackPeer::~LoopbackPeer() {
    runner_.shutdown({}, true);
    runner_.join();
}

namespace {
std::uint16_t freeTcpPort() {
    asio::io_context io;
    asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
    return a.local_endpoint().port();
}
} // namespace

ReferenceProxy::ReferenceProxy(LoopbackPeer& peer, std::chrono::milliseconds timeout) : peer_(peer) {
    port_ = freeTcpPort();
    spawn();
    if (!waitReady(url(), timeout)) {
        kill();
        throw std::runtime_error("dhtnode --proxyserver did not become ready");
    }
}

ReferenceProxy::~ReferenceProxy() {
    kill();
}

void ReferenceProxy::spawn() {
    const std::string port = std::to_string(port_);
    const std::string bootstrap = "127.0.0.1:" + std::to_string(peer_.port());
    const std::string network = std::to_string(LoopbackPeer::kNetwork);
    pid_ = ::fork();
    if (pid_ < 0)
        throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        int devnull = ::open("/dev/null", O_RDWR);
        ::dup2(devnull, 0);
        ::dup2(devnull, 1);
        ::dup2(devnull, 2);
        ::execlp("dhtnode", "dhtnode", "-s", "-p", "0", "-n", network.c_str(), "-b", bootstrap.c_str(), "--proxyserver",
                 port.c_str(), "--proxy-addr", "127.0.0.1", static_cast<char*>(nullptr));
        ::_exit(127);
    }
}

void ReferenceProxy::kill() {
    if (pid_ <= 0)
        return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
}

void ReferenceProxy::restart(std::chrono::milliseconds timeout) {
    kill();
    spawn();
    if (!waitReady(url(), timeout))
        throw std::runtime_error("dhtnode --proxyserver did not come back");
}

bool ReferenceProxy::waitReady(const std::string& url, std::chrono::milliseconds timeout) {
    // An external process gives no readiness signal: poll GET / on a timer until it reports a
    // good node (the DHT is usable) or the deadline passes.
    asio::io_context io;
    bool ready = false;
    {
        ProxyClient client(io, ProxyClientOptions().setUrl(url).setRequestTimeout(std::chrono::seconds(2)));
        asio::steady_timer retry(io);
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        std::function<void()> attempt = [&] {
            client.nodeInfo([&](std::error_code ec, NodeInfo info) {
                if (!ec && info.connected()) {
                    ready = true;
                    return;
                }
                if (std::chrono::steady_clock::now() >= deadline)
                    return;
                retry.expires_after(std::chrono::milliseconds(50));
                retry.async_wait([&](const std::error_code&) { attempt(); });
            });
        };
        attempt();
        io.run_for(timeout + std::chrono::seconds(3));
    }
    return ready;
}

} // namespace dhtgate::test
