// Test helper: a real DHT node (DhtRunner) on loopback, UDP port 0, IPv4 only.
//
//   TestDhtNode a;               // standalone node
//   TestDhtNode b;  b.bootstrapTo(a);   // b joins a (waitConnected() to wait for it)
#pragma once

#include <opendht/dhtrunner.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace dhtgate::test {

class TestDhtNode {
public:
    /// Starts the node at once (threaded DhtRunner bound to 127.0.0.1:0).
    TestDhtNode();
    ~TestDhtNode();
    TestDhtNode(const TestDhtNode&) = delete;
    TestDhtNode& operator=(const TestDhtNode&) = delete;

    const std::shared_ptr<dht::DhtRunner>& runner() const { return runner_; }
    dht::DhtRunner* operator->() const { return runner_.get(); }
    std::uint16_t port() const;

    /// Pings `other` so both nodes learn each other.
    void bootstrapTo(const TestDhtNode& other);
    /// Waits until this node has at least one good node (IPv4), up to `timeout`.
    bool waitConnected(std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

    /// Puts `value` under `key` and waits for the put's completion; true if it succeeded.
    bool put(const dht::InfoHash& key, std::shared_ptr<dht::Value> value,
             std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

    /// Stops the node (also done by the destructor).
    void stop();

private:
    struct Status;
    std::shared_ptr<Status> status_; // connectivity reported by the runner's status callback
    std::shared_ptr<dht::DhtRunner> runner_;
};

/// A DhtRunner in proxy-client mode: the unmodified OpenDHT 2.x client talking to `url`.
std::shared_ptr<dht::DhtRunner> makeProxyClient(const std::string& url);

} // namespace dhtgate::test
