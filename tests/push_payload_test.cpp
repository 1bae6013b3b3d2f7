#include "push/push_payload.h"

#include "codec/json.h"

#include <cppunit/extensions/HelperMacros.h>

using namespace dhtgate;
using namespace dhtgate::push;

namespace {

const std::string kHash = "ee00de17b4076115e11362ff32d27ddc852242fd";

ValueEvent event(std::string client, std::string session, std::int64_t t, std::vector<EventValue> values,
                 bool expired = false) {
    ValueEvent e;
    e.key = kHash;
    e.client_id = std::move(client);
    e.session_id = std::move(session);
    e.time_ms = t;
    e.values = std::move(values);
    e.expired = expired;
    return e;
}

GorushOptions legacy() {
    GorushOptions o;
    o.android_legacy = true;
    return o;
}

std::string header(const Request& r, const std::string& name) {
    for (const auto& [n, v] : r.headers)
        if (n == name)
            return v;
    return "<absent>";
}

bool validJson(const std::string& text) {
    json::Value v;
    json::Error err;
    return json::parse(text, v, err) && v.isObject();
}

} // namespace

class PushPayloadTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(PushPayloadTest);
    CPPUNIT_TEST(testReferenceAndroid);
    CPPUNIT_TEST(testReferenceIos);
    CPPUNIT_TEST(testReferenceExpired);
    CPPUNIT_TEST(testReferenceUnifiedPush);
    CPPUNIT_TEST(testModernAndroidAndIds);
    CPPUNIT_TEST(testManyExpiredValues);
    CPPUNIT_TEST(testTimeoutNoticesAndPing);
    CPPUNIT_TEST(testIosNormalPriorityAndTopic);
    CPPUNIT_TEST(testNoneFallback);
    CPPUNIT_TEST(testEscaping);
    CPPUNIT_TEST_SUITE_END();

public:
    // Spec §7.3, first example (2.4.12 android form, no "ids").
    void testReferenceAndroid() {
        auto data = valueNotification(event("client-A", "sess1", 1796205134603, {{1, 0, ""}}), false);
        CPPUNIT_ASSERT(data.priority == Priority::high);
        auto r = gorushRequest(data, "device-token-1", Platform::android, "", 0, legacy());
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(std::string(
            R"({"notifications":[{"data":{"key":"ee00de17b4076115e11362ff32d27ddc852242fd","s":"sess1","t":1796205134603,"to":"client-A"},"platform":2,"priority":"high","time_to_live":86400,"tokens":["device-token-1"]}]})"),
            r->body);
        CPPUNIT_ASSERT_EQUAL(std::size_t(205), r->body.size()); // the reference's Content-Length
        CPPUNIT_ASSERT(r->to_gateway);
        CPPUNIT_ASSERT_EQUAL(std::string("/api/push"), r->target);
        CPPUNIT_ASSERT_EQUAL(std::string("POST"), r->method);
        CPPUNIT_ASSERT_EQUAL(std::string("application/json"), header(*r, "Content-Type"));
    }

    void testReferenceIos() {
        auto data = valueNotification(event("client-B", "sessB", 1796205141985, {{7, 0, ""}}), false);
        auto r = gorushRequest(data, "ios-token-9", Platform::ios, "com.example.app.voip", 1796291541 - 86400);
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(std::string(
            R"({"notifications":[{"alert":{"title":"hello"},"data":{"key":"ee00de17b4076115e11362ff32d27ddc852242fd","s":"sessB","t":1796205141985,"to":"client-B"},"expiration":1796291541,"mutable_content":true,"platform":1,"priority":"high","push_type":"alert","tokens":["ios-token-9"],"topic":"com.example.app.voip"}]})"),
            r->body);
    }

    void testReferenceExpired() {
        auto data = valueNotification(event("client-A", "sess3", 1796205208213, {{4242, 0, ""}}, true), false);
        CPPUNIT_ASSERT(data.priority == Priority::normal);
        auto r = gorushRequest(data, "device-token-1", Platform::android, "", 0, legacy());
        CPPUNIT_ASSERT_EQUAL(std::string(
            R"({"notifications":[{"data":{"exp":"4242","key":"ee00de17b4076115e11362ff32d27ddc852242fd","s":"sess3","t":1796205208213,"to":"client-A"},"platform":2,"priority":"normal","time_to_live":86400,"tokens":["device-token-1"]}]})"),
            r->body);
    }

    // Spec §7.4: body byte-exact; unlike 2.4.12 the endpoint's port is kept (4.x behaviour).
    void testReferenceUnifiedPush() {
        ValueEvent e = event("client-U", "sessU", 1796205159009, {{5, 0, ""}});
        e.key = "5e918933d6f309bb7582ba0faa3ccf1c15b9418d";
        auto data = valueNotification(e, false);
        auto r = buildRequest(data, "http://127.0.0.1:27490/up/endpoint123?x=1", Platform::unifiedpush, "", 0);
        CPPUNIT_ASSERT(r);
        CPPUNIT_ASSERT_EQUAL(std::string(
            R"({"key":"5e918933d6f309bb7582ba0faa3ccf1c15b9418d","s":"sessU","t":1796205159009,"to":"client-U"})"),
            r->body);
        CPPUNIT_ASSERT_EQUAL(std::size_t(96), r->body.size());
        CPPUNIT_ASSERT(!r->to_gateway);
        CPPUNIT_ASSERT_EQUAL(std::string("http://127.0.0.1:27490/up/endpoint123?x=1"), r->target);
        CPPUNIT_ASSERT_EQUAL(std::string("POST"), r->method);
        CPPUNIT_ASSERT_EQUAL(std::string("application/json"), header(*r, "Content-Type"));
        CPPUNIT_ASSERT_EQUAL(std::string("86400"), header(*r, "TTL"));
        CPPUNIT_ASSERT_EQUAL(std::string("high"), header(*r, "Urgency"));
        auto expired = valueNotification(event("c", "s", 1, {{5, 0, ""}}, true));
        CPPUNIT_ASSERT_EQUAL(std::string("normal"), header(unifiedPushRequest(expired, "https://up.example/x"), "Urgency"));
        // UnifiedPush is never sent through gorush.
        CPPUNIT_ASSERT(!gorushRequest(data, "http://x/", Platform::unifiedpush, "", 0));
    }

    void testModernAndroidAndIds() {
        auto data = valueNotification(event("client-A", "sess1", 1796205134603, {{1, 1, ""}, {2, 0, ""}}));
        CPPUNIT_ASSERT(data.priority == Priority::high); // one value has priority 0
        CPPUNIT_ASSERT_EQUAL(std::string(
            R"({"ids":"1,2","key":"ee00de17b4076115e11362ff32d27ddc852242fd","s":"sess1","t":1796205134603,"to":"client-A"})"),
            data.json);
        auto r = gorushRequest(data, "device-token-1", Platform::android, "ignored-topic", 0);
        CPPUNIT_ASSERT_EQUAL(std::string(
            R"({"notifications":[{"android":{"priority":"high","ttl":"86400s"},"data":)" + data.json +
            R"(,"platform":2,"tokens":["device-token-1"]}]})"),
            r->body);
        auto low = valueNotification(event("c", "s", 1, {{1, 1, ""}, {2, 3, ""}}));
        CPPUNIT_ASSERT(low.priority == Priority::normal);
        auto typed = valueNotification(event("c", "s", 1, {{1, 0, "call"}, {2, 0, ""}}));
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"ids":"1,2","key":")" + kHash + R"(","pt":"call,","s":"s","t":1,"to":"c"})"),
                             typed.json);
    }

    // Spec §15 item 18: every expired id is announced, not only when exactly one expired.
    void testManyExpiredValues() {
        auto data = valueNotification(event("client-A", "sess3", 42, {{1, 0, ""}, {22, 0, ""}, {333, 1, ""}}, true));
        CPPUNIT_ASSERT(data.priority == Priority::normal);
        CPPUNIT_ASSERT_EQUAL(std::string(
            R"({"exp":"1,22,333","ids":"1,22,333","key":"ee00de17b4076115e11362ff32d27ddc852242fd","s":"sess3","t":42,"to":"client-A"})"),
            data.json);
        auto legacyData = valueNotification(event("c", "s", 42, {{1, 0, ""}, {18446744073709551615ULL, 0, ""}}, true), false);
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"exp":"1,18446744073709551615","key":")" + kHash + R"(","s":"s","t":42,"to":"c"})"),
                             legacyData.json);
    }

    void testTimeoutNoticesAndPing() {
        auto l = listenerTimeout(kHash, "client-B", "sessB");
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"s":"sessB","timeout":")" + kHash + R"(","to":"client-B"})"), l.json);
        CPPUNIT_ASSERT(l.priority == Priority::normal);
        auto p = putTimeout(kHash, "client-A", 1669839437382656844ULL, "sess1");
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"s":"sess1","timeout":")" + kHash +
                                         R"(","to":"client-A","vid":"1669839437382656844"})"),
                             p.json);
        // Android: a normal push; iOS: a visible alert with high priority (3.0.0+).
        auto a = gorushRequest(p, "tok", Platform::android, "", 100);
        CPPUNIT_ASSERT(a->body.find(R"("android":{"priority":"normal","ttl":"86400s"})") != std::string::npos);
        auto i = gorushRequest(l, "tok", Platform::ios, "topic", 100);
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"notifications":[{"alert":{"title":"hello"},"data":)" + l.json +
                                         R"(,"expiration":86500,"mutable_content":true,"platform":1,"priority":"high","push_type":"alert","tokens":["tok"],"topic":"topic"}]})"),
                             i->body);

        auto ping = push::ping("client-A");
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"pong":true,"to":"client-A"})"), ping.json);
        CPPUNIT_ASSERT(ping.priority == Priority::high);
    }

    void testIosNormalPriorityAndTopic() {
        auto data = valueNotification(event("c", "s", 5, {{9, 1, ""}}), false);
        GorushOptions o;
        o.bundle_id = "com.example.bundle";
        auto r = gorushRequest(data, "tok", Platform::ios, "", 1000, o);
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"notifications":[{"content_available":true,"data":)" + data.json +
                                         R"(,"expiration":87400,"platform":1,"priority":"normal","push_type":"background","tokens":["tok"],"topic":"com.example.bundle"}]})"),
                             r->body);
        // No topic and no bundle id: "topic" is omitted.
        auto bare = gorushRequest(data, "tok", Platform::ios, "", 1000);
        CPPUNIT_ASSERT(bare->body.find("topic") == std::string::npos);
        CPPUNIT_ASSERT(validJson(bare->body));
    }

    // Spec §15 item 17: the fallback for an empty/unknown platform is explicit.
    void testNoneFallback() {
        auto data = valueNotification(event("c", "s", 5, {{9, 0, ""}}));
        CPPUNIT_ASSERT(parsePlatform("") == Platform::none);
        CPPUNIT_ASSERT(parsePlatform("windows") == Platform::none);
        auto asIos = gorushRequest(data, "tok", parsePlatform(""), "t", 0);
        CPPUNIT_ASSERT(asIos->body == gorushRequest(data, "tok", Platform::ios, "t", 0)->body);
        GorushOptions o;
        o.none_as = NoneFallback::android;
        CPPUNIT_ASSERT(gorushRequest(data, "tok", Platform::none, "t", 0, o)->body ==
                       gorushRequest(data, "tok", Platform::android, "t", 0, o)->body);
        o.none_as = NoneFallback::drop;
        CPPUNIT_ASSERT(!buildRequest(data, "tok", Platform::none, "t", 0, o));
        CPPUNIT_ASSERT(buildRequest(data, "tok", Platform::ios, "t", 0, o));
    }

    void testEscaping() {
        auto data = valueNotification(event("cli\"ent\\é", "!*v\x01[P", 5, {{9, 0, ""}}));
        CPPUNIT_ASSERT(validJson(data.json));
        CPPUNIT_ASSERT(data.json.find(R"("to":"cli\"ent\\\u00e9")") != std::string::npos);
        CPPUNIT_ASSERT(data.json.find(R"("s":"!*v\u0001[P")") != std::string::npos);
        auto r = gorushRequest(data, "tok\"en", Platform::ios, "top\nic", 0);
        CPPUNIT_ASSERT(validJson(r->body));
        CPPUNIT_ASSERT(validJson(push::ping("a\"b").json));
        CPPUNIT_ASSERT(validJson(putTimeout(kHash, "\\", 1, "\"").json));
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(PushPayloadTest);
