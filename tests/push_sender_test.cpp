#include "push/push_sender.h"

#include "dhtgate/error.h"
#include "support/http_receiver.h"
#include "support/io_thread.h"

#include <asio/ip/tcp.hpp>
#include <cppunit/extensions/HelperMacros.h>

using namespace dhtgate;
using namespace dhtgate::push;
using namespace std::chrono_literals;

namespace {

struct Outcome {
    std::error_code ec;
    unsigned status {0};
};

// Collects completions (io thread) for the test thread.
class Outcomes {
public:
    PushSender::Done callback() {
        return [this](std::error_code ec, unsigned status) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                list_.push_back({ec, status});
            }
            count_.bump();
        };
    }
    bool waitFor(std::size_t n) { return count_.waitFor(n); }
    std::vector<Outcome> list() {
        std::lock_guard<std::mutex> lock(mutex_);
        return list_;
    }

private:
    std::mutex mutex_; // guards list_
    std::vector<Outcome> list_;
    test::Counter count_;
};

Data sampleData(int i) {
    ValueEvent e;
    e.key = "ee00de17b4076115e11362ff32d27ddc852242fd";
    e.client_id = "client-" + std::to_string(i);
    e.session_id = "sess";
    e.time_ms = 1796205134603;
    e.values = {{static_cast<std::uint64_t>(i + 1), 0, ""}};
    return valueNotification(e);
}

SenderOptions fastOptions(std::string gateway) {
    SenderOptions o;
    o.gateway = std::move(gateway);
    o.initial_backoff = 10ms;
    o.max_backoff = 40ms;
    o.connect_timeout = 2s;
    o.request_timeout = 5s;
    return o;
}

// A loopback port with nothing listening on it.
std::uint16_t closedPort() {
    asio::io_context io;
    asio::ip::tcp::acceptor a(io, {asio::ip::make_address("127.0.0.1"), 0});
    return a.local_endpoint().port();
}

} // namespace

class PushSenderTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(PushSenderTest);
    CPPUNIT_TEST(testGatewayUrl);
    CPPUNIT_TEST(testDeliversOverOneReusedConnection);
    CPPUNIT_TEST(testRetriesAfter503);
    CPPUNIT_TEST(testUnreachableGatewayCountsFailure);
    CPPUNIT_TEST(testClientErrorIsNotRetried);
    CPPUNIT_TEST(testUnifiedPushToEndpoint);
    CPPUNIT_TEST(testNoGatewayConfigured);
    CPPUNIT_TEST(testQueueIsBounded);
    CPPUNIT_TEST(testBadEndpointFailsWithoutRetry);
    CPPUNIT_TEST_SUITE_END();

public:
    void testGatewayUrl() {
        CPPUNIT_ASSERT_EQUAL(std::string("http://localhost:8090/api/push"), gatewayPushUrl("8090"));
        CPPUNIT_ASSERT_EQUAL(std::string("http://127.0.0.1:8090/api/push"), gatewayPushUrl("127.0.0.1:8090"));
        CPPUNIT_ASSERT_EQUAL(std::string("https://push.example/api/push"), gatewayPushUrl("https://push.example/"));
        CPPUNIT_ASSERT_EQUAL(std::string("http://gw:1/api/push"), gatewayPushUrl("http://gw:1/api/push"));
        CPPUNIT_ASSERT_EQUAL(std::string(), gatewayPushUrl(""));

        ServerConfig config;
        config.push_server = "8090";
        config.bundle_id = "com.example";
        config.push_none_platform = "drop";
        config.push_max_in_flight = 3;
        SenderOptions o;
        std::string error;
        CPPUNIT_ASSERT(senderOptionsFromConfig(config, {}, o, error));
        CPPUNIT_ASSERT_EQUAL(std::string("8090"), o.gateway);
        CPPUNIT_ASSERT_EQUAL(std::string("com.example"), o.gorush.bundle_id);
        CPPUNIT_ASSERT(o.gorush.none_as == NoneFallback::drop);
        CPPUNIT_ASSERT_EQUAL(std::size_t(3), o.max_in_flight);
        config.push_none_platform = "windows";
        CPPUNIT_ASSERT(!senderOptionsFromConfig(config, {}, o, error));
        CPPUNIT_ASSERT(error.find("windows") != std::string::npos);
    }

    void testDeliversOverOneReusedConnection() {
        test::HttpReceiver receiver;
        test::IoThread io;
        Outcomes outcomes;
        auto options = fastOptions("127.0.0.1:" + std::to_string(receiver.port()));
        options.max_in_flight = 1; // strictly one at a time: all five share one connection
        auto sender = io.run([&] { return PushSender::create(io.io(), options); });
        std::vector<std::string> expected;
        io.run([&] {
            for (int i = 0; i < 5; ++i) {
                auto data = sampleData(i);
                expected.push_back(gorushRequest(data, "tok-" + std::to_string(i), Platform::android, "", 0)->body);
                CPPUNIT_ASSERT(sender->send(data, "tok-" + std::to_string(i), Platform::android, ""));
            }
            CPPUNIT_ASSERT(sender->stats().queued == 5); // nothing starts inside send()
        });
        CPPUNIT_ASSERT(receiver.waitForRequests(5));
        auto got = receiver.requests();
        CPPUNIT_ASSERT_EQUAL(std::size_t(5), got.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            CPPUNIT_ASSERT_EQUAL(std::string("POST"), got[i].method);
            CPPUNIT_ASSERT_EQUAL(std::string("/api/push"), got[i].target);
            CPPUNIT_ASSERT_EQUAL(std::string("application/json"), got[i].header("content-type"));
            CPPUNIT_ASSERT_EQUAL(expected[i], got[i].body); // FIFO order
        }
        // Wait until the sender saw the last answer, then check the counters.
        io.run([&] { sender->send(gorushRequest(sampleData(9), "t", Platform::ios, "", 0).value(), outcomes.callback()); });
        CPPUNIT_ASSERT(outcomes.waitFor(1));
        CPPUNIT_ASSERT(!outcomes.list()[0].ec);
        CPPUNIT_ASSERT_EQUAL(200u, outcomes.list()[0].status);
        auto stats = sender->stats();
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(6), stats.sent);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), stats.failed);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), stats.retries);
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), receiver.connectionsAccepted());
        io.run([&] { sender.reset(); });
    }

    void testRetriesAfter503() {
        test::HttpReceiver receiver;
        receiver.script({{503, "{}", {}, false}, {503, "{}", {{"Retry-After", "0"}}, false}});
        test::IoThread io;
        Outcomes outcomes;
        auto sender = io.run([&] { return PushSender::create(io.io(), fastOptions(receiver.url())); });
        io.run([&] { sender->send(sampleData(1), "tok", Platform::ios, "topic", outcomes.callback()); });
        CPPUNIT_ASSERT(outcomes.waitFor(1));
        auto o = outcomes.list()[0];
        CPPUNIT_ASSERT_MESSAGE(o.ec.message(), !o.ec);
        CPPUNIT_ASSERT_EQUAL(200u, o.status);
        auto got = receiver.requests();
        CPPUNIT_ASSERT_EQUAL(std::size_t(3), got.size());
        CPPUNIT_ASSERT(got[0].body == got[2].body && got[1].body == got[2].body);
        auto stats = sender->stats();
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), stats.sent);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), stats.retries);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), stats.failed);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), stats.queued);
        io.run([&] { sender.reset(); });
    }

    void testUnreachableGatewayCountsFailure() {
        test::IoThread io;
        Outcomes outcomes;
        auto options = fastOptions("127.0.0.1:" + std::to_string(closedPort()));
        options.max_attempts = 3;
        auto sender = io.run([&] { return PushSender::create(io.io(), options); });
        io.run([&] { sender->send(sampleData(1), "tok", Platform::android, "", outcomes.callback()); });
        CPPUNIT_ASSERT(outcomes.waitFor(1));
        auto o = outcomes.list()[0];
        CPPUNIT_ASSERT(o.ec);
        CPPUNIT_ASSERT_EQUAL(0u, o.status);
        auto stats = sender->stats();
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), stats.sent);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), stats.failed);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), stats.retries);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), stats.in_flight);
        io.run([&] { sender.reset(); });
    }

    void testClientErrorIsNotRetried() {
        test::HttpReceiver receiver;
        receiver.setDefaultReply({400, R"({"error":"bad"})", {}, false});
        test::IoThread io;
        Outcomes outcomes;
        auto sender = io.run([&] { return PushSender::create(io.io(), fastOptions(receiver.url())); });
        io.run([&] { sender->send(sampleData(1), "tok", Platform::android, "", outcomes.callback()); });
        CPPUNIT_ASSERT(outcomes.waitFor(1));
        CPPUNIT_ASSERT(outcomes.list()[0].ec == errc::http_status);
        CPPUNIT_ASSERT_EQUAL(400u, outcomes.list()[0].status);
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), receiver.requests().size());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), sender->stats().failed);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), sender->stats().retries);
        io.run([&] { sender.reset(); });
    }

    void testUnifiedPushToEndpoint() {
        test::HttpReceiver endpoint;
        test::IoThread io;
        Outcomes outcomes;
        // No gorush gateway at all: UnifiedPush does not need one.
        auto sender = io.run([&] { return PushSender::create(io.io(), fastOptions("")); });
        auto data = sampleData(3);
        std::string token = endpoint.url() + "/up/endpoint123?x=1";
        io.run([&] { CPPUNIT_ASSERT(sender->send(data, token, Platform::unifiedpush, "", outcomes.callback())); });
        CPPUNIT_ASSERT(outcomes.waitFor(1));
        CPPUNIT_ASSERT(!outcomes.list()[0].ec);
        auto got = endpoint.requests();
        CPPUNIT_ASSERT_EQUAL(std::size_t(1), got.size());
        CPPUNIT_ASSERT_EQUAL(std::string("POST"), got[0].method);
        CPPUNIT_ASSERT_EQUAL(std::string("/up/endpoint123?x=1"), got[0].target);
        CPPUNIT_ASSERT_EQUAL(data.json, got[0].body);
        CPPUNIT_ASSERT_EQUAL(std::string("86400"), got[0].header("ttl"));
        CPPUNIT_ASSERT_EQUAL(std::string("high"), got[0].header("urgency"));
        CPPUNIT_ASSERT_EQUAL("127.0.0.1:" + std::to_string(endpoint.port()), got[0].header("host"));
        io.run([&] { sender.reset(); });
    }

    void testNoGatewayConfigured() {
        test::IoThread io;
        Outcomes outcomes;
        auto sender = io.run([&] { return PushSender::create(io.io(), fastOptions("")); });
        io.run([&] {
            sender->send(sampleData(1), "tok", Platform::android, "", outcomes.callback());
            CPPUNIT_ASSERT(outcomes.list().empty()); // never completes from inside send()
        });
        CPPUNIT_ASSERT(outcomes.waitFor(1));
        CPPUNIT_ASSERT(outcomes.list()[0].ec == errc::invalid_config);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), sender->stats().failed);
        io.run([&] { sender.reset(); });
    }

    void testQueueIsBounded() {
        test::HttpReceiver receiver;
        test::IoThread io;
        Outcomes outcomes;
        auto options = fastOptions(receiver.url());
        options.max_in_flight = 1;
        options.max_queue = 2;
        auto sender = io.run([&] { return PushSender::create(io.io(), options); });
        io.run([&] {
            for (int i = 0; i < 4; ++i)
                sender->send(sampleData(i), "tok", Platform::android, "", outcomes.callback());
        });
        CPPUNIT_ASSERT(outcomes.waitFor(4));
        std::size_t ok = 0, full = 0;
        for (const auto& o : outcomes.list()) {
            ok += !o.ec;
            full += o.ec == std::errc::no_buffer_space;
        }
        CPPUNIT_ASSERT_EQUAL(std::size_t(2), ok);
        CPPUNIT_ASSERT_EQUAL(std::size_t(2), full);
        CPPUNIT_ASSERT_EQUAL(std::size_t(2), receiver.requests().size());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), sender->stats().sent);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(2), sender->stats().failed);
        io.run([&] { sender.reset(); });
    }

    // A UnifiedPush token that is not a URL cannot succeed later: one attempt, counted as failed.
    void testBadEndpointFailsWithoutRetry() {
        test::IoThread io;
        Outcomes outcomes;
        auto sender = io.run([&] { return PushSender::create(io.io(), fastOptions("")); });
        io.run([&] { sender->send(sampleData(1), "not a url", Platform::unifiedpush, "", outcomes.callback()); });
        CPPUNIT_ASSERT(outcomes.waitFor(1));
        CPPUNIT_ASSERT(outcomes.list()[0].ec == errc::invalid_url);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(1), sender->stats().failed);
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(0), sender->stats().retries);
        io.run([&] { sender.reset(); });
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(PushSenderTest);
