#include "state/state_store.h"

#include "dhtgate/error.h"
#include "support/temp_dir.h"

#include <cppunit/extensions/HelperMacros.h>
#include <opendht/crypto.h>

#include <fstream>
#include <iterator>
#include <random>

using namespace dhtgate;
using namespace dhtgate::state;

namespace {

constexpr std::int64_t kNow = 1796205128; // the spec's reference run

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
}

std::shared_ptr<dht::Value> plainValue(dht::Value::Id id, const std::string& data) {
    auto v = std::make_shared<dht::Value>(reinterpret_cast<const uint8_t*>(data.data()), data.size());
    v->id = id;
    return v;
}

// One RSA key (libopendht 2.4 verifies and encrypts with RSA only), generated once: it is slow.
const dht::crypto::PrivateKey& rsaKey() {
    static auto key = dht::crypto::PrivateKey::generate(2048);
    return key;
}

const dht::InfoHash kKey("ee00de17b4076115e11362ff32d27ddc852242fd");

} // namespace

class StateStoreTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(StateStoreTest);
    CPPUNIT_TEST(testRoundTripAllFields);
    CPPUNIT_TEST(testReferenceLayoutLoads);
    CPPUNIT_TEST(testBadFilesAreMovedAside);
    CPPUNIT_TEST(testExpiredEntriesDropped);
    CPPUNIT_TEST(testAtomicSaveLeavesNoTemporaryFile);
    CPPUNIT_TEST(testMissingAndUnreadableFiles);
    CPPUNIT_TEST_SUITE_END();

public:
    void testRoundTripAllFields() {
        test::TempDir dir;
        PersistedState in;

        PermanentPutRecord plain;
        plain.key = kKey;
        plain.value = plainValue(1669839437382656844ULL, "push");
        plain.value->user_type = "text/plain";
        plain.value->priority = 1;
        plain.expiry = kNow + 86400;
        plain.client_id = "client-A";
        plain.session_id = "sess1";
        plain.platform = push::Platform::android;
        plain.token = "device-token-1";
        plain.topic = "com.example.bundle";
        in.puts.push_back(plain);

        PermanentPutRecord signedPut;
        signedPut.key = dht::InfoHash::get("signed");
        signedPut.value = plainValue(42, "signed data");
        signedPut.value->seq = 3;
        signedPut.value->sign(rsaKey());
        CPPUNIT_ASSERT(signedPut.value->checkSignature());
        signedPut.expiry = kNow + 10;
        signedPut.token = "token-with-platform-none"; // kept, unlike the reference
        in.puts.push_back(signedPut);

        PermanentPutRecord encrypted;
        encrypted.key = dht::InfoHash::get("encrypted");
        auto clear = plainValue(0, "secret");
        encrypted.value = std::make_shared<dht::Value>(clear->encrypt(rsaKey(), rsaKey().getPublicKey()));
        encrypted.value->id = 7;
        encrypted.expiry = kNow + 20;
        in.puts.push_back(encrypted);

        PushListenerRecord l1 {"ios-token-9", kKey, "client-B", kNow + 3600, "sessB", push::Platform::ios, "com.example.app.voip"};
        PushListenerRecord l2 {"ios-token-9", kKey, "client-C", kNow + 3601, "sessC", push::Platform::ios, ""};
        PushListenerRecord l3 {"https://up.example/ep?x=1", dht::InfoHash::get("other"), "", kNow + 5, "",
                               push::Platform::unifiedpush, "p256dh|auth"};
        in.listeners = {l1, l2, l3};

        std::string path = dir.file("state.bin");
        std::string message;
        CPPUNIT_ASSERT_MESSAGE(message, !save(path, in, &message));
        auto out = load(path, kNow);
        CPPUNIT_ASSERT_MESSAGE(out.message, !out.error);
        CPPUNIT_ASSERT_EQUAL(kStateFormatVersion, out.version);
        CPPUNIT_ASSERT_EQUAL(size_t(0), out.dropped_expired);
        CPPUNIT_ASSERT_EQUAL(size_t(3), out.state.puts.size());
        CPPUNIT_ASSERT_EQUAL(size_t(3), out.state.listeners.size());

        for (const auto& want : in.puts) {
            auto it = std::find_if(out.state.puts.begin(), out.state.puts.end(),
                                   [&](const PermanentPutRecord& p) { return p.key == want.key; });
            CPPUNIT_ASSERT(it != out.state.puts.end());
            CPPUNIT_ASSERT(it->value);
            CPPUNIT_ASSERT_EQUAL(want.value->id, it->value->id);
            CPPUNIT_ASSERT(want.value->getPacked() == it->value->getPacked());
            CPPUNIT_ASSERT_EQUAL(want.expiry, it->expiry);
            CPPUNIT_ASSERT_EQUAL(want.client_id, it->client_id);
            CPPUNIT_ASSERT_EQUAL(want.session_id, it->session_id);
            CPPUNIT_ASSERT(want.platform == it->platform);
            CPPUNIT_ASSERT_EQUAL(want.token, it->token);
            CPPUNIT_ASSERT_EQUAL(want.topic, it->topic);
        }
        auto findPut = [&](const dht::InfoHash& k) {
            return *std::find_if(out.state.puts.begin(), out.state.puts.end(),
                                 [&](const PermanentPutRecord& p) { return p.key == k; });
        };
        auto s = findPut(signedPut.key);
        CPPUNIT_ASSERT(s.value->isSigned());
        CPPUNIT_ASSERT(s.value->checkSignature());
        CPPUNIT_ASSERT_EQUAL(std::uint64_t(3), std::uint64_t(s.value->seq));
        auto e = findPut(encrypted.key);
        CPPUNIT_ASSERT(e.value->isEncrypted());
        CPPUNIT_ASSERT(e.value->cypher == encrypted.value->cypher);
        auto decrypted = e.value->decrypt(rsaKey());
        CPPUNIT_ASSERT(decrypted);
        CPPUNIT_ASSERT_EQUAL(std::string("secret"), std::string(decrypted->data.begin(), decrypted->data.end()));
        auto p = findPut(kKey);
        CPPUNIT_ASSERT_EQUAL(std::string("text/plain"), p.value->user_type);
        CPPUNIT_ASSERT_EQUAL(1u, p.value->priority);

        for (const auto& want : in.listeners) {
            auto it = std::find_if(out.state.listeners.begin(), out.state.listeners.end(), [&](const PushListenerRecord& l) {
                return l.token == want.token && l.key == want.key && l.client_id == want.client_id;
            });
            CPPUNIT_ASSERT(it != out.state.listeners.end());
            CPPUNIT_ASSERT_EQUAL(want.expiry, it->expiry);
            CPPUNIT_ASSERT_EQUAL(want.session_id, it->session_id);
            CPPUNIT_ASSERT(want.platform == it->platform);
            CPPUNIT_ASSERT_EQUAL(want.topic, it->topic);
        }
    }

    // The exact layout of spec §8, as a reference server writes it (no "version").
    void testReferenceLayoutLoads() {
        msgpack::sbuffer buf;
        msgpack::packer<msgpack::sbuffer> pk(&buf);
        auto value = plainValue(1669839437382656844ULL, "push");
        pk.pack_map(2);
        pk.pack("puts");
        pk.pack_map(1);
        kKey.msgpack_pack(pk);
        pk.pack_array(1);
        pk.pack_map(2);
        pk.pack(value->id);
        pk.pack_map(7);
        pk.pack("value"); value->msgpack_pack(pk);
        pk.pack("exp"); pk.pack(std::time_t(1796291528));
        pk.pack("cid"); pk.pack("client-A");
        pk.pack("sid"); pk.pack("sess1");
        pk.pack("t"); pk.pack(1);
        pk.pack("token"); pk.pack("device-token-1");
        pk.pack("top"); pk.pack("com.example.bundle");
        auto bare = plainValue(99, "no push");
        pk.pack(bare->id);
        pk.pack_map(2);
        pk.pack("value"); bare->msgpack_pack(pk);
        pk.pack("exp"); pk.pack(std::time_t(1796291529));
        pk.pack("pushListeners");
        pk.pack_map(1);
        pk.pack("ios-token-9");
        pk.pack_array(1);
        pk.pack_map(1);
        kKey.msgpack_pack(pk);
        pk.pack_array(1);
        pk.pack_map(5);
        pk.pack("cid"); pk.pack("client-B");
        pk.pack("exp"); pk.pack(std::time_t(1796291541));
        pk.pack("sid"); pk.pack("sessB");
        pk.pack("t"); pk.pack(2);
        pk.pack("top"); pk.pack("com.example.app.voip");

        test::TempDir dir;
        std::string path = dir.file("reference.state");
        writeFile(path, std::string(buf.data(), buf.size()));
        auto out = load(path, kNow);
        CPPUNIT_ASSERT_MESSAGE(out.message, !out.error);
        CPPUNIT_ASSERT_EQUAL(0u, out.version);
        CPPUNIT_ASSERT_EQUAL(size_t(2), out.state.puts.size());
        const auto& put = out.state.puts[0].value->id == value->id ? out.state.puts[0] : out.state.puts[1];
        const auto& other = &put == &out.state.puts[0] ? out.state.puts[1] : out.state.puts[0];
        CPPUNIT_ASSERT(put.key == kKey);
        CPPUNIT_ASSERT_EQUAL(std::string("push"), std::string(put.value->data.begin(), put.value->data.end()));
        CPPUNIT_ASSERT_EQUAL(std::int64_t(1796291528), put.expiry);
        CPPUNIT_ASSERT_EQUAL(std::string("client-A"), put.client_id);
        CPPUNIT_ASSERT_EQUAL(std::string("sess1"), put.session_id);
        CPPUNIT_ASSERT(put.platform == push::Platform::android);
        CPPUNIT_ASSERT_EQUAL(std::string("device-token-1"), put.token);
        CPPUNIT_ASSERT_EQUAL(std::string("com.example.bundle"), put.topic);
        CPPUNIT_ASSERT_EQUAL(dht::Value::Id(99), other.value->id);
        CPPUNIT_ASSERT(other.token.empty() && other.client_id.empty() && other.platform == push::Platform::none);

        CPPUNIT_ASSERT_EQUAL(size_t(1), out.state.listeners.size());
        const auto& l = out.state.listeners[0];
        CPPUNIT_ASSERT_EQUAL(std::string("ios-token-9"), l.token);
        CPPUNIT_ASSERT(l.key == kKey);
        CPPUNIT_ASSERT_EQUAL(std::string("client-B"), l.client_id);
        CPPUNIT_ASSERT_EQUAL(std::int64_t(1796291541), l.expiry);
        CPPUNIT_ASSERT_EQUAL(std::string("sessB"), l.session_id);
        CPPUNIT_ASSERT(l.platform == push::Platform::ios);
        CPPUNIT_ASSERT_EQUAL(std::string("com.example.app.voip"), l.topic);

        // What we write keeps the reference layout: a reference-style reader finds the same
        // entries, and re-encoding what we read gives back what we read.
        auto again = decode(encode(out.state), kNow);
        CPPUNIT_ASSERT(!again.error);
        CPPUNIT_ASSERT_EQUAL(size_t(2), again.state.puts.size());
        CPPUNIT_ASSERT_EQUAL(size_t(1), again.state.listeners.size());
    }

    void testBadFilesAreMovedAside() {
        test::TempDir dir;
        PersistedState good;
        good.puts.push_back({kKey, plainValue(5, "x"), kNow + 100, "c", "s", push::Platform::ios, "tok", "top"});
        good.listeners.push_back({"tok", kKey, "c", kNow + 100, "s", push::Platform::android, ""});
        std::string goodBytes = encode(good);

        std::string garbage(512, '\0');
        std::mt19937 rng(1234);
        for (auto& c : garbage)
            c = static_cast<char>(rng());

        msgpack::sbuffer versioned;
        msgpack::packer<msgpack::sbuffer> pk(&versioned);
        pk.pack_map(1);
        pk.pack("version");
        pk.pack(99);

        msgpack::sbuffer notMap;
        msgpack::packer<msgpack::sbuffer>(&notMap).pack(std::string("hello"));

        // A reference-layout file whose value is not a value, and one with a foreign push type.
        auto badPut = [](auto packValue, int type) {
            msgpack::sbuffer b;
            msgpack::packer<msgpack::sbuffer> p(&b);
            p.pack_map(1);
            p.pack("puts");
            p.pack_map(1);
            kKey.msgpack_pack(p);
            p.pack_array(1);
            p.pack_map(1);
            p.pack(5);
            p.pack_map(3);
            p.pack("value");
            packValue(p);
            p.pack("exp");
            p.pack(kNow + 100);
            p.pack("t");
            p.pack(type);
            return std::string(b.data(), b.size());
        };
        std::string badValue = badPut([](auto& p) { p.pack("not a value"); }, 1);
        std::string badType = badPut([](auto& p) { plainValue(5, "x")->msgpack_pack(p); }, 9);

        struct Case { const char* name; std::string bytes; const char* expect; };
        std::vector<Case> cases {
            {"truncated", goodBytes.substr(0, goodBytes.size() / 2), "truncated"},
            {"garbage", garbage, ""},
            {"version", std::string(versioned.data(), versioned.size()), "version 99"},
            {"empty", "", "empty"},
            {"not a map", std::string(notMap.data(), notMap.size()), "not a map"},
            {"trailing", goodBytes + "x", "unexpected bytes"},
            {"bad value", badValue, "is not a valid DHT value"},
            {"bad push type", badType, "unknown push type 9"},
        };
        std::string path = dir.file("state.bin");
        for (const auto& c : cases) {
            writeFile(path, c.bytes);
            auto out = loadOrMoveAside(path, kNow);
            std::string ctx = std::string(c.name) + ": " + out.message;
            CPPUNIT_ASSERT_MESSAGE(ctx, out.error == errc::state_corrupt);
            CPPUNIT_ASSERT_MESSAGE(ctx, out.message.find(path) != std::string::npos);
            CPPUNIT_ASSERT_MESSAGE(ctx, out.message.find(c.expect) != std::string::npos);
            CPPUNIT_ASSERT_MESSAGE(ctx, out.state.empty());
            CPPUNIT_ASSERT_MESSAGE(ctx, !out.moved_to.empty());
            CPPUNIT_ASSERT_MESSAGE(ctx, out.message.find(out.moved_to) != std::string::npos);
            CPPUNIT_ASSERT_MESSAGE(ctx, !std::filesystem::exists(path));
            CPPUNIT_ASSERT_MESSAGE(ctx, readFile(out.moved_to) == c.bytes);
        }
        // Every bad file is kept under its own name, none overwritten.
        CPPUNIT_ASSERT_EQUAL(cases.size(), dir.list().size());
        // The original file was never touched by a save meanwhile; the sound file loads.
        writeFile(path, goodBytes);
        auto ok = loadOrMoveAside(path, kNow);
        CPPUNIT_ASSERT_MESSAGE(ok.message, !ok.error);
        CPPUNIT_ASSERT(ok.moved_to.empty());
        CPPUNIT_ASSERT_EQUAL(size_t(1), ok.state.puts.size());
    }

    void testExpiredEntriesDropped() {
        PersistedState in;
        in.puts.push_back({kKey, plainValue(1, "old"), kNow - 1, "", "", push::Platform::none, "", ""});
        in.puts.push_back({kKey, plainValue(2, "new"), kNow, "", "", push::Platform::none, "", ""});
        in.listeners.push_back({"tok", kKey, "a", kNow - 100, "", push::Platform::ios, ""});
        in.listeners.push_back({"tok", kKey, "b", kNow + 100, "", push::Platform::ios, ""});
        auto out = decode(encode(in), kNow);
        CPPUNIT_ASSERT_MESSAGE(out.message, !out.error);
        CPPUNIT_ASSERT_EQUAL(size_t(2), out.dropped_expired);
        CPPUNIT_ASSERT_EQUAL(size_t(1), out.state.puts.size());
        CPPUNIT_ASSERT_EQUAL(dht::Value::Id(2), out.state.puts[0].value->id);
        CPPUNIT_ASSERT_EQUAL(size_t(1), out.state.listeners.size());
        CPPUNIT_ASSERT_EQUAL(std::string("b"), out.state.listeners[0].client_id);
    }

    void testAtomicSaveLeavesNoTemporaryFile() {
        test::TempDir dir;
        std::string path = dir.file("state.bin");
        PersistedState s;
        for (int i = 0; i < 3; ++i) {
            s.puts.push_back({dht::InfoHash::get(std::to_string(i)), plainValue(i + 1, "v"), kNow + 60, "", "",
                              push::Platform::none, "", ""});
            std::string message;
            CPPUNIT_ASSERT_MESSAGE(message, !save(path, s, &message));
            CPPUNIT_ASSERT(dir.list() == std::vector<std::string> {"state.bin"});
            CPPUNIT_ASSERT_EQUAL(size_t(i + 1), load(path, kNow).state.puts.size());
        }
        CPPUNIT_ASSERT_EQUAL(0600u, static_cast<unsigned>(std::filesystem::status(path).permissions()) & 0777u);

        // A directory that does not exist: a clear error, nothing written anywhere.
        std::string message;
        auto ec = save(dir.file("missing/state.bin"), s, &message);
        CPPUNIT_ASSERT(ec == errc::state_io);
        CPPUNIT_ASSERT(message.find("missing/state.bin") != std::string::npos);
        CPPUNIT_ASSERT(dir.list() == std::vector<std::string> {"state.bin"});
    }

    void testMissingAndUnreadableFiles() {
        test::TempDir dir;
        auto missing = loadOrMoveAside(dir.file("nothing"), kNow);
        CPPUNIT_ASSERT(!missing.error);
        CPPUNIT_ASSERT(missing.file_missing);
        CPPUNIT_ASSERT(missing.state.empty());
        CPPUNIT_ASSERT(dir.list().empty());

        std::filesystem::create_directory(dir.file("adir"));
        auto unreadable = load(dir.file("adir"), kNow);
        CPPUNIT_ASSERT(unreadable.error == errc::state_io);
        CPPUNIT_ASSERT(unreadable.message.find("adir") != std::string::npos);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(StateStoreTest);
