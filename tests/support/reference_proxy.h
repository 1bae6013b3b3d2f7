// The reference proxy as a test peer: Debian's `dhtnode --proxyserver PORT` in a child process,
// bootstrapped from an in-process dht::DhtRunner on loopback (a lone reference node answers puts
// with 502, so it needs a peer).
#pragma once

#include <opendht/dhtrunner.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>

namespace dhtgate::test {

/// A DhtRunner on 127.0.0.1 (random UDP port) on a private network id.
class LoopbackPeer {
public:
    static constexpr dht::NetId kNetwork = 0x5eed;
    LoopbackPeer();
    ~LoopbackPeer();
    dht::DhtRunner& runner() { return runner_; }
    std::uint16_t port() const { return port_; }

private:
    dht::DhtRunner runner_;
    std::uint16_t port_{0};
};

class ReferenceProxy {
public:
    /// Spawns dhtnode on a free loopback port and waits until its DHT has a good node.
    /// Throws std::runtime_error when dhtnode is missing or not ready within `timeout`.
    explicit ReferenceProxy(LoopbackPeer& peer, std::chrono::milliseconds timeout = std::chrono::seconds(20));
    ~ReferenceProxy();

    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
    std::uint16_t port() const { return port_; }
    /// Kills the child (SIGKILL: like a crash, streams are dropped without a final chunk).
    void kill();
    /// Starts it again on the same port and waits until ready.
    void restart(std::chrono::milliseconds timeout = std::chrono::seconds(20));

    /// Waits until `GET /` on `url` answers 200 with some good node (polls every 50 ms).
    static bool waitReady(const std::string& url, std::chrono::milliseconds timeout);

private:
    void spawn();

    LoopbackPeer& peer_;
    std::uint16_t port_{0};
    pid_t pid_{-1};
};

} // namespace dhtgate::test
