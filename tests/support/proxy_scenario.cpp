#include "support/proxy_scenario.h"

#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <cppunit/extensions/HelperMacros.h>

#include <future>
#include <random>

using namespace std::chrono_literals;

namespace dhtgate::test {

namespace {
template <typename T> T await(std::future<T>& f) {
    CPPUNIT_ASSERT_MESSAGE("proxy client callback timed out", f.wait_for(20s) == std::future_status::ready);
    return f.get();
}
} // namespace

ProxyClient::ListenCallback ListenRecorder::callback() {
    return [this](const ProxyClient::Values& values, bool expired) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& v : values)
            events_.push_back({text(*v), v->id, expired});
        cv_.notify_all();
        return true;
    };
}

bool ListenRecorder::waitCount(std::size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return events_.size() >= n; });
}

std::vector<ListenRecorder::Event> ListenRecorder::events() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_;
}

std::string text(const dht::Value& v) {
    return std::string(v.data.begin(), v.data.end());
}

std::shared_ptr<dht::Value> textValue(const std::string& s) {
    return std::make_shared<dht::Value>(dht::ValueType::USER_DATA.id, reinterpret_cast<const uint8_t*>(s.data()),
                                        s.size());
}

NodeInfo nodeInfo(ProxyClient& client, std::error_code& ec) {
    std::promise<std::pair<std::error_code, NodeInfo>> p;
    auto f = p.get_future();
    client.nodeInfo([&](std::error_code e, NodeInfo i) { p.set_value({e, std::move(i)}); });
    auto r = await(f);
    ec = r.first;
    return r.second;
}

ProxyClient::Values get(ProxyClient& client, const dht::InfoHash& key, std::error_code& ec) {
    std::promise<std::pair<std::error_code, ProxyClient::Values>> p;
    auto f = p.get_future();
    client.get(key, [&](std::error_code e, ProxyClient::Values v) { p.set_value({e, std::move(v)}); });
    auto r = await(f);
    ec = r.first;
    return r.second;
}

std::shared_ptr<dht::Value> put(ProxyClient& client, const dht::InfoHash& key, std::shared_ptr<dht::Value> v,
                                std::error_code& ec, bool permanent) {
    std::promise<std::pair<std::error_code, std::shared_ptr<dht::Value>>> p;
    auto f = p.get_future();
    client.put(
        key, std::move(v),
        [&](std::error_code e, std::shared_ptr<dht::Value> s) {
            p.set_value({e, s});
        },
        permanent);
    auto r = await(f);
    ec = r.first;
    return r.second;
}

bool peerPut(dht::DhtRunner& peer, const dht::InfoHash& key, std::shared_ptr<dht::Value> v) {
    auto p = std::make_shared<std::promise<bool>>();
    auto f = p->get_future();
    peer.put(key, std::move(v), [p](bool ok) { p->set_value(ok); });
    return await(f);
}

void syncIo(ProxyClient& client) {
    std::promise<void> p;
    auto f = p.get_future();
    asio::post(client.ioContext(), [&] { p.set_value(); });
    CPPUNIT_ASSERT(f.wait_for(5s) == std::future_status::ready);
}

void runProxyScenario(const std::string& url, dht::DhtRunner& peer) {
    ProxyClient client(ProxyClientOptions().setUrl(url).setListenRetry(50ms, 500ms));
    std::error_code ec;

    auto info = nodeInfo(client, ec);
    CPPUNIT_ASSERT_MESSAGE(ec.message(), !ec);
    CPPUNIT_ASSERT_EQUAL(std::size_t(40), info.nodeId.size());
    CPPUNIT_ASSERT(info.connected());

    const auto key = dht::InfoHash::get("dhtgate-client-scenario-" + std::to_string(std::random_device{}()));
    CPPUNIT_ASSERT(get(client, key, ec).empty());
    CPPUNIT_ASSERT(!ec);

    // A value stored by a DHT peer is found through the proxy.
    CPPUNIT_ASSERT(peerPut(peer, key, textValue("from peer")));
    auto values = get(client, key, ec);
    CPPUNIT_ASSERT_MESSAGE(ec.message(), !ec);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), values.size());
    CPPUNIT_ASSERT_EQUAL(std::string("from peer"), text(*values[0]));

    // Listen: the stored value first, exactly once.
    ListenRecorder recorder;
    auto token = client.listen(key, recorder.callback());
    CPPUNIT_ASSERT(recorder.waitCount(1, 20s));
    CPPUNIT_ASSERT_EQUAL(std::string("from peer"), recorder.events()[0].data);

    // Put through the proxy: the proxy assigns an id; the listen sees the value.
    auto stored = put(client, key, textValue("from client"), ec);
    CPPUNIT_ASSERT_MESSAGE(ec.message(), !ec);
    CPPUNIT_ASSERT(stored && stored->id != 0);
    CPPUNIT_ASSERT_EQUAL(std::string("from client"), text(*stored));
    CPPUNIT_ASSERT(recorder.waitCount(2, 20s));

    // A later value from the peer reaches the listen too.
    CPPUNIT_ASSERT(peerPut(peer, key, textValue("later from peer")));
    CPPUNIT_ASSERT(recorder.waitCount(3, 20s));

    // Get by id.
    std::promise<std::pair<std::error_code, ProxyClient::Values>> byId;
    auto byIdF = byId.get_future();
    client.get(key, stored->id, [&](std::error_code e, ProxyClient::Values v) { byId.set_value({e, std::move(v)}); });
    auto r = await(byIdF);
    CPPUNIT_ASSERT(!r.first);
    CPPUNIT_ASSERT_EQUAL(std::size_t(1), r.second.size());
    CPPUNIT_ASSERT_EQUAL(std::string("from client"), text(*r.second[0]));

    // After cancelListen (and a round trip through the io thread) no callback runs.
    client.cancelListen(token);
    syncIo(client);
    const auto seen = recorder.events();
    CPPUNIT_ASSERT(peerPut(peer, key, textValue("after cancel")));
    CPPUNIT_ASSERT_EQUAL(std::size_t(4), get(client, key, ec).size());
    syncIo(client);
    CPPUNIT_ASSERT_EQUAL(seen.size(), recorder.events().size());
    // Every event was a distinct, non-expired value.
    CPPUNIT_ASSERT_EQUAL(std::size_t(3), seen.size());
    for (std::size_t i = 0; i < seen.size(); ++i)
        for (std::size_t j = i + 1; j < seen.size(); ++j)
            CPPUNIT_ASSERT(seen[i].id != seen[j].id);

    std::promise<std::error_code> statsDone;
    auto statsF = statsDone.get_future();
    client.stats([&](std::error_code e, ProxyStats) { statsDone.set_value(e); });
    auto statsEc = await(statsF);
    // The reference answers 503 until its first stats snapshot.
    CPPUNIT_ASSERT(!statsEc || statsEc == http::statusError(503));
}

} // namespace dhtgate::test
