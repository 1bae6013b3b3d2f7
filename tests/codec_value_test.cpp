#include "codec/value_codec.h"

#include "support/test_keys.h"

#include <cppunit/extensions/HelperMacros.h>

#include <random>
#include <string>

using namespace dhtgate;
using dhtgate::codec::ParseError;

namespace {

dht::Value plainValue(std::string_view data, dht::Value::Id id, dht::ValueType::Id type = 0)
{
    dht::Value v(type, reinterpret_cast<const std::uint8_t*>(data.data()), data.size(), id);
    return v;
}

std::shared_ptr<dht::Value> signedValue()
{
    auto v = std::make_shared<dht::Value>(plainValue("signed value", 17575072449169793398ULL));
    v->user_type = "text/plain";
    v->seq = 3;
    v->sign(test::rsaKey(0));
    return v;
}

int putStatus(std::string_view body, std::size_t maxSize = 64 * 1024)
{
    ParseError err;
    auto req = codec::parsePut(body, maxSize, err);
    if (req) {
        CPPUNIT_ASSERT(req->value);
        return 200;
    }
    CPPUNIT_ASSERT(!err.reason.empty());
    return err.status;
}

std::string putError(std::string_view body)
{
    ParseError err;
    CPPUNIT_ASSERT(!codec::parsePut(body, 64 * 1024, err));
    return err.reason;
}

codec::PutRequest put(std::string_view body)
{
    ParseError err;
    auto req = codec::parsePut(body, 64 * 1024, err);
    CPPUNIT_ASSERT_MESSAGE(std::string(body) + " -> " + err.reason, req.has_value());
    return *req;
}

std::string keyOf(std::string_view param)
{
    dht::InfoHash h;
    std::string reason;
    if (!codec::parseKey(param, h, reason)) {
        CPPUNIT_ASSERT(!reason.empty());
        return "rejected";
    }
    return h.toString();
}

bool endsWith(std::string_view s, std::string_view suffix)
{
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The owner member with the reference's trailing NUL, as a 2.x proxy would send it.
std::string withOwnerNul(std::string json)
{
    auto pos = json.find("-----END PUBLIC KEY-----\\n\"");
    CPPUNIT_ASSERT(pos != std::string::npos);
    json.insert(pos + std::string("-----END PUBLIC KEY-----\\n").size(), "\\u0000");
    return json;
}

} // namespace

class CodecValueTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(CodecValueTest);
    CPPUNIT_TEST(testSpecExamples);
    CPPUNIT_TEST(testSignedJson);
    CPPUNIT_TEST(testSignedRoundTrip);
    CPPUNIT_TEST(testOwnerPemCache);
    CPPUNIT_TEST(testEncryptedRoundTrip);
    CPPUNIT_TEST(testTamperedSignature);
    CPPUNIT_TEST(testPutErrors);
    CPPUNIT_TEST(testPutMembers);
    CPPUNIT_TEST(testPutPermanent);
    CPPUNIT_TEST(testPutSizeLimit);
    CPPUNIT_TEST(testPushRequest);
    CPPUNIT_TEST(testValueLine);
    CPPUNIT_TEST(testKeys);
    CPPUNIT_TEST(testMutatedBodies);
    CPPUNIT_TEST_SUITE_END();

public:
    void testSpecExamples()
    {
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"data":"aGVsbG8gd29ybGQ=","id":"8365178989511496815","type":0})"),
                             codec::valueJson(plainValue("hello world", 8365178989511496815ULL)));
        auto legacy = plainValue("legacy", 12345);
        legacy.priority = 1;
        legacy.user_type = "text/plain";
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"data":"bGVnYWN5","id":"12345","prio":1,"type":0,"utype":"text/plain"})"),
                             codec::valueJson(legacy));
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"data":"ZXhwaXJlcw==","expired":true,"id":"777","type":5})"),
                             codec::valueJson(plainValue("expires", 777, 5), true));
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"data":"","id":"0","type":65535})"), codec::valueJson(plainValue("", 0, 65535)));
        // appendValueJson appends, it does not replace.
        std::string out = "x";
        codec::appendValueJson(out, plainValue("c2Vjb25k", 1));
        CPPUNIT_ASSERT_EQUAL(std::string(R"(x{"data":"YzJWamIyNWs=","id":"1","type":0})"), out);
        // The put body of spec §3.5 parses to the value that encodes back to the answer.
        auto req = put(R"({"data":"uXBlcm1hbmVudCBwdXQgZnJvbSBjbGllbnQ=","id":"0","permanent":true,"type":0})");
        CPPUNIT_ASSERT(req.permanent && !req.push);
        req.value->id = 18363898093773152461ULL;
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"data":"uXBlcm1hbmVudCBwdXQgZnJvbSBjbGllbnQ=","id":"18363898093773152461","type":0})"),
                             codec::valueJson(*req.value));
    }

    void testSignedJson()
    {
        auto v = signedValue();
        v->priority = 2;
        auto json = codec::valueJson(*v);
        const std::string pem = [&] {
            auto s = v->owner->toString();
            while (!s.empty() && s.back() == '\0')
                s.pop_back();
            return s;
        }();
        CPPUNIT_ASSERT(pem.rfind("-----BEGIN PUBLIC KEY-----\n", 0) == 0);
        // Member order: data, id, owner, prio, seq, sig, type, utype; no NUL in owner.
        CPPUNIT_ASSERT(json.rfind(R"({"data":"c2lnbmVkIHZhbHVl","id":"17575072449169793398","owner":"-----BEGIN PUBLIC KEY-----\n)", 0) == 0);
        CPPUNIT_ASSERT(json.find("\\u0000") == std::string::npos);
        const auto tail = json.substr(json.find("-----END PUBLIC KEY-----\\n\""));
        CPPUNIT_ASSERT(tail.rfind(R"(-----END PUBLIC KEY-----\n","prio":2,"seq":3,"sig":")", 0) == 0);
        CPPUNIT_ASSERT(endsWith(tail, R"(","type":0,"utype":"text/plain"})"));
        // With a recipient, "to" comes between "sig" and "type".
        v->recipient = dht::InfoHash::get("recipient");
        json = codec::valueJson(*v);
        CPPUNIT_ASSERT(json.find("\",\"to\":\"" + v->recipient.toString() + "\",\"type\":0,") != std::string::npos);
    }

    void testSignedRoundTrip()
    {
        auto v = signedValue();
        CPPUNIT_ASSERT(v->checkSignature());
        for (const auto& line : {codec::valueJson(*v), withOwnerNul(codec::valueJson(*v)) + "\n"}) {
            bool expired = true;
            ParseError err;
            auto back = codec::parseValueLine(line, expired, err);
            CPPUNIT_ASSERT_MESSAGE(err.reason, back);
            CPPUNIT_ASSERT(!expired);
            CPPUNIT_ASSERT(*back == *v);
            CPPUNIT_ASSERT_EQUAL(v->seq, back->seq);
            CPPUNIT_ASSERT(back->checkSignature());
            CPPUNIT_ASSERT_EQUAL(codec::valueJson(*v), codec::valueJson(*back));
            // The same text is accepted as a put (signature verified) and survives unchanged.
            auto req = put(line);
            CPPUNIT_ASSERT(*req.value == *v);
        }
    }

    void testOwnerPemCache()
    {
        // More owners than the encoder caches, encoded in several orders, and owners freed and
        // replaced (their addresses get reused): each value must show its own key.
        auto ownerIn = [](const std::string& json) {
            auto start = json.find("\"owner\":\"") + 9;
            return json.substr(start, json.find('"', start) - start);
        };
        auto expectedPem = [](const dht::crypto::PublicKey& key) {
            auto pem = key.toString();
            while (!pem.empty() && pem.back() == '\0')
                pem.pop_back();
            std::string quoted;
            for (char c : pem)
                quoted += (c == '\n') ? std::string("\\n") : std::string(1, c);
            return quoted;
        };
        for (int round = 0; round < 3; ++round) {
            std::vector<dht::Value> values;
            for (int i = 0; i < 20; ++i) {
                auto& v = values.emplace_back(plainValue("owned", static_cast<dht::Value::Id>(i + 1)));
                v.owner = std::make_shared<dht::crypto::PublicKey>(dht::crypto::PrivateKey::generateEC().getPublicKey().toString());
            }
            for (int pass = 0; pass < 2; ++pass)
                for (int i = 0; i < 20; ++i) {
                    const auto& v = values[pass ? 19 - i : (i * 7) % 20];
                    CPPUNIT_ASSERT_EQUAL(expectedPem(*v.owner), ownerIn(codec::valueJson(v)));
                }
        }
    }

    void testEncryptedRoundTrip()
    {
        auto clear = plainValue("secret", 0);
        auto enc = clear.encrypt(test::rsaKey(0), test::rsaKey(1).getPublicKey());
        enc.id = 14817435878301208791ULL;
        enc.priority = 1;
        CPPUNIT_ASSERT(enc.isEncrypted());
        const auto json = codec::valueJson(enc);
        CPPUNIT_ASSERT(json.rfind("{\"cypher\":\"", 0) == 0);
        CPPUNIT_ASSERT(endsWith(json, R"(","id":"14817435878301208791","prio":1})"));
        const auto expiredJson = codec::valueJson(enc, true);
        CPPUNIT_ASSERT(expiredJson.find(R"(","expired":true,"id":"14817435878301208791","prio":1})") != std::string::npos);
        bool expired = false;
        ParseError err;
        auto back = codec::parseValueLine(expiredJson, expired, err);
        CPPUNIT_ASSERT_MESSAGE(err.reason, back);
        CPPUNIT_ASSERT(expired);
        CPPUNIT_ASSERT(*back == enc);
        CPPUNIT_ASSERT_EQUAL(1u, back->priority);
        auto req = put(json);
        CPPUNIT_ASSERT(*req.value == enc);
        // The recipient can still decrypt what went through the codec.
        auto dec = back->decrypt(test::rsaKey(1));
        CPPUNIT_ASSERT(dec);
        CPPUNIT_ASSERT(dec->data == clear.data);
    }

    void testTamperedSignature()
    {
        auto v = signedValue();
        auto good = codec::valueJson(*v);
        // Accepted twice (the second time from the verification cache), then every tampered
        // variant must still be rejected although a valid twin was just verified.
        CPPUNIT_ASSERT_EQUAL(200, putStatus(good));
        CPPUNIT_ASSERT_EQUAL(200, putStatus(good));
        auto tampered = [&](std::string_view from, std::string_view to) {
            auto body = good;
            auto pos = body.find(from);
            CPPUNIT_ASSERT(pos != std::string::npos);
            body.replace(pos, from.size(), to);
            return putStatus(body);
        };
        CPPUNIT_ASSERT_EQUAL(400, tampered("\"type\":0", "\"type\":1"));
        CPPUNIT_ASSERT_EQUAL(400, tampered("\"utype\":\"text/plain\"", "\"utype\":\"text/plaim\""));
        CPPUNIT_ASSERT_EQUAL(400, tampered("\"type\":0", "\"to\":\"" + std::string(40, '1') + "\",\"type\":0"));
        auto otherOwner = [] {
            auto w = plainValue("x", 1);
            w.sign(test::rsaKey(1));
            auto j = codec::valueJson(w);
            auto start = j.find("\"owner\":\"") + 9;
            return j.substr(start, j.find('"', start) - start);
        }();
        auto ownStart = good.find("\"owner\":\"") + 9;
        CPPUNIT_ASSERT_EQUAL(400, tampered(good.substr(ownStart, good.find('"', ownStart) - ownStart), otherOwner));
        CPPUNIT_ASSERT_EQUAL(200, putStatus(good));
        // Tamper with the data: the signature no longer matches.
        auto badData = good;
        badData.replace(badData.find("c2lnbmVkIHZhbHVl"), 16, "c2lnbmVkIHZhbHVm");
        CPPUNIT_ASSERT_EQUAL(400, putStatus(badData));
        CPPUNIT_ASSERT_EQUAL(std::string("Invalid signature"), putError(badData));
        // Signature from another key.
        auto other = signedValue();
        other->sign(test::rsaKey(1));
        auto mixed = good;
        auto sigPos = mixed.find("\"sig\":\"") + 7;
        auto otherJson = codec::valueJson(*other);
        auto otherSig = otherJson.substr(otherJson.find("\"sig\":\"") + 7);
        otherSig.resize(otherSig.find('"'));
        mixed.replace(sigPos, mixed.find('"', sigPos) - sigPos, otherSig);
        CPPUNIT_ASSERT_EQUAL(std::string("Invalid signature"), putError(mixed));
        // Changing the seq (signed) breaks it too; changing id or prio (unsigned) does not.
        auto badSeq = good;
        badSeq.replace(badSeq.find("\"seq\":3"), 7, "\"seq\":4");
        CPPUNIT_ASSERT_EQUAL(400, putStatus(badSeq));
        auto newId = good;
        newId.replace(newId.find("17575072449169793398"), 20, "42");
        CPPUNIT_ASSERT_EQUAL(200, putStatus(newId));
    }

    void testPutErrors()
    {
        CPPUNIT_ASSERT_EQUAL(std::string("Missing parameters"), putError(""));
        for (const char* body : {"{\"data\":", " ", "{} x", "{}{}", "{\"type\":0} // c", "/*c*/{}", "{\"a\":1,}", "[1,2,3]",
                                 "123", "\"abc\"", "null"}) {
            CPPUNIT_ASSERT_EQUAL_MESSAGE(body, 400, putStatus(body));
            CPPUNIT_ASSERT_EQUAL(std::string("Incorrect JSON"), putError(body));
        }
        for (const char* body : {R"({"type":"x"})", R"({"type":-1})", R"({"type":65536})", R"({"type":1.5})", R"({"seq":"x"})",
                                 R"({"seq":70000})", R"({"owner":"garbage"})", R"({"owner":""})", R"({"owner":5})",
                                 R"({"data":5})", R"({"data":true})", R"({"data":"eA"})", R"({"data":"!!!not base64###"})",
                                 R"({"data":"aGVsbG8gd29ybGQ"})", R"({"cypher":"eA"})", R"({"sig":"AAAA"})", R"({"sig":1})",
                                 R"({"utype":1})", R"({"to":"abc"})", R"({"to":1})", R"({"prio":-1})", R"({"prio":"1"})",
                                 R"({"prio":4294967296})", R"({"permanent":{"key":1}})", R"({"permanent":{"refresh":"yes"}})"})
            CPPUNIT_ASSERT_EQUAL_MESSAGE(body, 400, putStatus(body));
    }

    void testPutMembers()
    {
        auto empty = put("{}");
        CPPUNIT_ASSERT(!empty.permanent);
        CPPUNIT_ASSERT_EQUAL(dht::Value::Id(0), empty.value->id);
        CPPUNIT_ASSERT(empty.value->data.empty());
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"data":"","id":"0","type":0})"), codec::valueJson(*put(" {} ").value));
        for (const char* body : {R"({"id":"abc"})", R"({"id":-1})", R"({"id":"-1"})", R"({"id":"0"})", R"({"id":1.5})",
                                 R"({"id":true})", R"({"id":"18446744073709551616"})", R"({"id":" 1"})", R"({"id":null})"})
            CPPUNIT_ASSERT_EQUAL_MESSAGE(body, dht::Value::Id(0), put(body).value->id);
        CPPUNIT_ASSERT_EQUAL(dht::Value::Id(42), put(R"({"id":42})").value->id);
        CPPUNIT_ASSERT_EQUAL(dht::Value::Id(18446744073709551615ULL), put(R"({"id":"18446744073709551615"})").value->id);
        CPPUNIT_ASSERT_EQUAL(dht::Value::Id(18446744073709551615ULL), put(R"({"id":18446744073709551615})").value->id);
        auto full = put(R"({"data":"aGk=","id":"7","prio":3,"seq":9,"type":65535,"utype":"a\u00e9","unknown":[1]})");
        CPPUNIT_ASSERT_EQUAL(std::string("hi"), std::string(full.value->data.begin(), full.value->data.end()));
        CPPUNIT_ASSERT_EQUAL(3u, full.value->priority);
        CPPUNIT_ASSERT_EQUAL(std::uint16_t(9), full.value->seq);
        CPPUNIT_ASSERT_EQUAL(dht::ValueType::Id(65535), full.value->type);
        CPPUNIT_ASSERT_EQUAL(std::string("a\xc3\xa9"), full.value->user_type);
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"data":"aGk=","id":"7","prio":3,"type":65535,"utype":"a\u00e9"})"),
                             codec::valueJson(*full.value));
        // Null members count as absent; an unsigned owner is accepted; "to" needs an owner to show.
        CPPUNIT_ASSERT_EQUAL(200, putStatus(R"({"data":null,"type":null,"owner":null})"));
        auto owned = put("{\"owner\":\"" + [] {
            auto pem = test::rsaKey(2).getPublicKey().toString();
            while (!pem.empty() && pem.back() == '\0')
                pem.pop_back();
            std::string escaped;
            for (char c : pem)
                escaped += (c == '\n') ? std::string("\\n") : std::string(1, c);
            return escaped;
        }() + "\",\"to\":\"" + std::string(40, 'A') + "\"}");
        CPPUNIT_ASSERT(owned.value->owner);
        CPPUNIT_ASSERT(owned.value->owner->getId() == test::rsaKey(2).getPublicKey().getId());
        CPPUNIT_ASSERT_EQUAL(std::string(40, 'a'), owned.value->recipient.toString());
        auto json = codec::valueJson(*owned.value);
        CPPUNIT_ASSERT(json.find("\"seq\":0,\"to\":\"" + std::string(40, 'a') + "\",\"type\":0}") != std::string::npos);
        CPPUNIT_ASSERT(json.find("\"sig\"") == std::string::npos);
    }

    void testPutPermanent()
    {
        for (const char* body : {R"({"permanent":true})", R"({"permanent":false})", R"({"permanent":null})", R"({"permanent":1})"}) {
            auto req = put(body);
            CPPUNIT_ASSERT_MESSAGE(body, req.permanent);
            CPPUNIT_ASSERT(!req.push);
        }
        auto req = put(R"({"data":"eA==","permanent":{"client_id":"cid","key":"tok","platform":"android","session_id":"s1","topic":"t"},"type":3})");
        CPPUNIT_ASSERT(req.permanent && req.push);
        CPPUNIT_ASSERT_EQUAL(std::string("tok"), req.push->key);
        CPPUNIT_ASSERT_EQUAL(std::string("cid"), req.push->client_id);
        CPPUNIT_ASSERT_EQUAL(std::string("s1"), req.push->session_id);
        CPPUNIT_ASSERT_EQUAL(std::string("android"), req.push->platform);
        CPPUNIT_ASSERT_EQUAL(std::string("t"), req.push->topic);
        CPPUNIT_ASSERT_EQUAL(dht::ValueType::Id(3), req.value->type);
        auto emptyPush = put(R"({"permanent":{}})");
        CPPUNIT_ASSERT(emptyPush.push && emptyPush.push->key.empty());
    }

    void testPutSizeLimit()
    {
        auto makeBody = [](std::size_t n, const char* member) {
            std::string data(n, 'x');
            auto json = codec::valueJson(plainValue(data, 1));
            std::string b64 = json.substr(9, json.find('"', 9) - 9);
            return std::string("{\"") + member + "\":\"" + b64 + "\"}";
        };
        CPPUNIT_ASSERT_EQUAL(200, putStatus(makeBody(40000, "data")));
        CPPUNIT_ASSERT_EQUAL(200, putStatus(makeBody(64 * 1024, "data")));
        CPPUNIT_ASSERT_EQUAL(413, putStatus(makeBody(64 * 1024 + 1, "data")));
        CPPUNIT_ASSERT_EQUAL(413, putStatus(makeBody(70000, "data")));
        CPPUNIT_ASSERT_EQUAL(413, putStatus(makeBody(70000, "cypher")));
        CPPUNIT_ASSERT_EQUAL(413, putStatus(makeBody(101, "data"), 100));
        CPPUNIT_ASSERT_EQUAL(200, putStatus(makeBody(100, "data"), 100));
    }

    void testPushRequest()
    {
        ParseError err;
        auto p = codec::parsePushRequest(
            R"({"client_id":"client-node-id","key":"fake-device-token","platform":"android","refresh":true,"session_id":"sj[P","topic":"com.example.topic"} )",
            err);
        CPPUNIT_ASSERT_MESSAGE(err.reason, p);
        CPPUNIT_ASSERT_EQUAL(std::string("fake-device-token"), p->key);
        CPPUNIT_ASSERT_EQUAL(std::string("client-node-id"), p->client_id);
        CPPUNIT_ASSERT_EQUAL(std::string("sj[P"), p->session_id);
        CPPUNIT_ASSERT_EQUAL(std::string("android"), p->platform);
        CPPUNIT_ASSERT_EQUAL(std::string("com.example.topic"), p->topic);
        CPPUNIT_ASSERT(p->refresh);
        auto minimal = codec::parsePushRequest(R"({"key":"k"})", err);
        CPPUNIT_ASSERT(minimal && !minimal->refresh && minimal->platform.empty());
        for (const char* body : {"", "{", "[]", "\"k\"", "{} x"}) {
            CPPUNIT_ASSERT(!codec::parsePushRequest(body, err));
            CPPUNIT_ASSERT_EQUAL(400, err.status);
            CPPUNIT_ASSERT_EQUAL(std::string("Incorrect JSON"), err.reason);
        }
        for (const char* body : {"{}", R"({"key":""})", R"({"client_id":"c"})", R"({"key":null})"}) {
            CPPUNIT_ASSERT(!codec::parsePushRequest(body, err));
            CPPUNIT_ASSERT_EQUAL(400, err.status);
            CPPUNIT_ASSERT_EQUAL(std::string("No token"), err.reason);
        }
        for (const char* body : {R"({"key":1})", R"({"key":"k","refresh":"true"})", R"({"key":"k","topic":[]})"}) {
            CPPUNIT_ASSERT_MESSAGE(body, !codec::parsePushRequest(body, err));
            CPPUNIT_ASSERT_EQUAL(400, err.status);
        }
    }

    void testValueLine()
    {
        bool expired = true;
        ParseError err;
        auto v = codec::parseValueLine("{\"data\":\"c2Vjb25k\",\"id\":\"1181309488246774641\",\"type\":0}\n", expired, err);
        CPPUNIT_ASSERT(v && !expired);
        CPPUNIT_ASSERT_EQUAL(dht::Value::Id(1181309488246774641ULL), v->id);
        v = codec::parseValueLine(R"({"data":"ZXhwaXJlcw==","expired":true,"id":"777","pt":"x","type":5})", expired, err);
        CPPUNIT_ASSERT(v && expired);
        CPPUNIT_ASSERT_EQUAL(std::string(R"({"data":"ZXhwaXJlcw==","id":"777","type":5})"), codec::valueJson(*v));
        for (const char* line : {"", "{", "[]", R"({"data":"eA"})", R"({"expired":1})"}) {
            CPPUNIT_ASSERT_MESSAGE(line, !codec::parseValueLine(line, expired, err));
            CPPUNIT_ASSERT_EQUAL(400, err.status);
        }
    }

    void testKeys()
    {
        CPPUNIT_ASSERT_EQUAL(std::string("913a73b565c8e2c8ed94497580f619397709b8b6"), keyOf("testkey"));
        const std::string hex = "847f1b5402f5e71e234d9efc5690eff77602b747";
        CPPUNIT_ASSERT_EQUAL(hex, keyOf(hex));
        CPPUNIT_ASSERT_EQUAL(hex, keyOf("847F1B5402F5E71E234D9EFC5690EFF77602B747"));
        CPPUNIT_ASSERT_EQUAL(dht::InfoHash::get(hex.substr(0, 39)).toString(), keyOf(hex.substr(0, 39)));
        CPPUNIT_ASSERT_EQUAL(dht::InfoHash::get(std::string(40, '0')).toString(), keyOf(std::string(40, '0')));
        const std::string notHex = "g47f1b5402f5e71e234d9efc5690eff77602b747";
        CPPUNIT_ASSERT_EQUAL(dht::InfoHash::get(notHex).toString(), keyOf(notHex));
        CPPUNIT_ASSERT_EQUAL(dht::InfoHash::get("a-b_c.d~e!").toString(), keyOf("a-b_c.d~e!"));
        for (const std::string& bad : {std::string(), hex + "0", hex + "deadbeef", hex + "x", hex + "-", std::string("a\tb"),
                                      std::string("a\nb"), std::string("a\x7f"), std::string("caf\xc3\xa9"),
                                      std::string("a\0b", 3), std::string("a b\x01")})
            CPPUNIT_ASSERT_EQUAL_MESSAGE(bad, std::string("rejected"), keyOf(bad));
    }

    void testMutatedBodies()
    {
        std::mt19937 rng(12345);
        const std::vector<std::string> seeds = {
            codec::valueJson(*signedValue()),
            R"({"data":"uXBlcm1hbmVudCBwdXQgZnJvbSBjbGllbnQ=","id":"0","permanent":{"client_id":"c","key":"k","platform":"ios","session_id":"s","topic":"t"},"type":0})",
            R"({"cypher":"AAECAwQF","id":"5","prio":1,"seq":2,"to":"847f1b5402f5e71e234d9efc5690eff77602b747","utype":"\ud83d\ude00"})",
        };
        const std::string alphabet = "{}[]\",:\\0123456789-+.eEtrufalsn \x00\x1f\x7f\xc3\xa9\xff=/AZaz";
        int accepted = 0;
        for (int i = 0; i < 3000; ++i) {
            std::string body = seeds[i % seeds.size()];
            const int kind = static_cast<int>(rng() % 4);
            if (kind == 0) {
                body.resize(rng() % (body.size() + 1));
            } else {
                const int edits = 1 + static_cast<int>(rng() % 4);
                for (int e = 0; e < edits && !body.empty(); ++e) {
                    const std::size_t pos = rng() % body.size();
                    const char c = alphabet[rng() % alphabet.size()];
                    if (kind == 1)
                        body[pos] = c;
                    else if (kind == 2)
                        body.insert(body.begin() + static_cast<std::ptrdiff_t>(pos), c);
                    else
                        body.erase(pos, 1 + rng() % 8);
                }
            }
            ParseError err;
            // The other entry points must cope with the same garbage.
            if (!codec::parsePushRequest(body, err))
                CPPUNIT_ASSERT_EQUAL(400, err.status);
            bool expiredLine;
            if (!codec::parseValueLine(body, expiredLine, err))
                CPPUNIT_ASSERT_EQUAL(400, err.status);
            dht::InfoHash key;
            std::string reason;
            CPPUNIT_ASSERT(codec::parseKey(body, key, reason) || !reason.empty());
            auto req = codec::parsePut(body, 64 * 1024, err);
            if (req) {
                CPPUNIT_ASSERT(req->value);
                ++accepted;
                // Whatever was accepted encodes to JSON that parses back.
                bool expired;
                CPPUNIT_ASSERT(codec::parseValueLine(codec::valueJson(*req->value), expired, err));
            } else {
                CPPUNIT_ASSERT_MESSAGE(body, err.status == 400 || err.status == 413);
                CPPUNIT_ASSERT(!err.reason.empty());
            }
        }
        CPPUNIT_ASSERT(accepted > 0);
    }
};

CPPUNIT_TEST_SUITE_REGISTRATION(CodecValueTest);
