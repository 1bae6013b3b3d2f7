#include "support/dht_node.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <condition_variable>
#include <future>
#include <mutex>

namespace dhtgate::test {

struct TestDhtNode::Status {
    std::mutex mutex; // guards connected
    std::condition_variable cv;
    bool connected {false};
};

TestDhtNode::TestDhtNode() : status_(std::make_shared<Status>()), runner_(std::make_shared<dht::DhtRunner>()) {
    dht::DhtRunner::Config config;
    config.threaded = true;
    sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_port = 0;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    config.bind4 = dht::SockAddr(reinterpret_cast<const sockaddr*>(&sin), sizeof(sin));
    dht::DhtRunner::Context context;
    context.statusChangedCallback = [status = status_](dht::NodeStatus v4, dht::NodeStatus v6) {
        {
            std::lock_guard<std::mutex> lock(status->mutex);
            status->connected = v4 == dht::NodeStatus::Connected || v6 == dht::NodeStatus::Connected;
        }
        status->cv.notify_all();
    };
    runner_->run(config, std::move(context));
}

TestDhtNode::~TestDhtNode() { stop(); }

std::uint16_t TestDhtNode::port() const { return runner_->getBoundPort(AF_INET); }

void TestDhtNode::bootstrapTo(const TestDhtNode& other) {
    sockaddr_in sin {};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(other.port());
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    runner_->bootstrap(dht::SockAddr(reinterpret_cast<const sockaddr*>(&sin), sizeof(sin)));
}

bool TestDhtNode::waitConnected(std::chrono::milliseconds timeout) const {
    std::unique_lock<std::mutex> lock(status_->mutex);
    return status_->cv.wait_for(lock, timeout, [&] { return status_->connected; });
}

bool TestDhtNode::put(const dht::InfoHash& key, std::shared_ptr<dht::Value> value,
                      std::chrono::milliseconds timeout) const {
    auto done = std::make_shared<std::promise<bool>>();
    auto f = done->get_future();
    runner_->put(key, std::move(value), [done](bool ok) { done->set_value(ok); });
    return f.wait_for(timeout) == std::future_status::ready && f.get();
}

void TestDhtNode::stop() {
    if (runner_) {
        runner_->join();
    }
}

std::shared_ptr<dht::DhtRunner> makeProxyClient(const std::string& url) {
    auto client = std::make_shared<dht::DhtRunner>();
    dht::DhtRunner::Config config;
    config.threaded = true;
    config.proxy_server = url;
    client->run(config, dht::DhtRunner::Context {});
    return client;
}

} // namespace dhtgate::test
