#include "tls/identity_store.h"

#include "tls/identity_bridge.h"

#include <cppunit/extensions/HelperMacros.h>
#include <opendht/value.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using dhtgate::tls::createIdentity;
using dhtgate::tls::CreateIdentityOptions;
using dhtgate::tls::loadIdentity;

namespace {

std::string readAll(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void writeAll(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary) << data;
}

unsigned mode(const std::string& path) {
    struct stat st {};
    CPPUNIT_ASSERT_EQUAL(0, ::stat(path.c_str(), &st));
    return st.st_mode & 07777;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

CreateIdentityOptions ecOptions(const std::string& password = {}) {
    CreateIdentityOptions o;
    o.keyType = CreateIdentityOptions::KeyType::ec;
    o.password = password;
    return o;
}

} // namespace

class TlsIdentityStoreTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(TlsIdentityStoreTest);
    CPPUNIT_TEST(testCreateAndLoad);
    CPPUNIT_TEST(testPermissions);
    CPPUNIT_TEST(testNoOverwrite);
    CPPUNIT_TEST(testPassword);
    CPPUNIT_TEST(testReferenceFiles);
    CPPUNIT_TEST(testRsaIdentitySignsValues);
    CPPUNIT_TEST(testMissing);
    CPPUNIT_TEST(testUnreadable);
    CPPUNIT_TEST(testCorrupt);
    CPPUNIT_TEST(testMismatched);
    CPPUNIT_TEST(testLoadOrCreate);
    CPPUNIT_TEST_SUITE_END();

    std::string dir_;

public:
    void setUp() override {
        char tmpl[] = "/tmp/dhtgate-identity-XXXXXX";
        CPPUNIT_ASSERT(mkdtemp(tmpl));
        dir_ = tmpl;
    }
    void tearDown() override { std::filesystem::remove_all(dir_); }

    void testCreateAndLoad() {
        const std::string prefix = dir_ + "/id";
        dht::crypto::Identity created;
        auto st = createIdentity(prefix, ecOptions(), created);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT(created.first && created.second);
        CPPUNIT_ASSERT_EQUAL(std::string("dhtgate"), created.second->getName());
        CPPUNIT_ASSERT(contains(readAll(prefix + ".pem"), "-----BEGIN PRIVATE KEY-----"));
        CPPUNIT_ASSERT(contains(readAll(prefix + ".crt"), "-----BEGIN CERTIFICATE-----"));

        dht::crypto::Identity loaded;
        st = loadIdentity(prefix, "", loaded);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT(loaded.second->getId() == created.second->getId());
        CPPUNIT_ASSERT(loaded.first->getPublicKey().getLongId() == created.first->getPublicKey().getLongId());
        CPPUNIT_ASSERT(loaded.second->getPacked() == created.second->getPacked());
        // The loaded identity is usable for TLS as is.
        dhtgate::tls::OpenSslIdentity ossl;
        CPPUNIT_ASSERT(dhtgate::tls::exportIdentity(loaded, ossl));
    }

    void testPermissions() {
        const std::string prefix = dir_ + "/perm";
        mode_t old = ::umask(0); // the files must be 0600 even with a permissive umask
        dht::crypto::Identity id;
        auto st = createIdentity(prefix, ecOptions(), id);
        ::umask(old);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT_EQUAL(0600u, mode(prefix + ".pem"));
        CPPUNIT_ASSERT_EQUAL(0600u, mode(prefix + ".crt"));
    }

    void testNoOverwrite() {
        const std::string prefix = dir_ + "/existing";
        writeAll(prefix + ".crt", "keep me");
        dht::crypto::Identity id;
        auto st = createIdentity(prefix, ecOptions(), id);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT(contains(st.message, "already exists"));
        CPPUNIT_ASSERT_EQUAL(std::string("keep me"), readAll(prefix + ".crt"));
        CPPUNIT_ASSERT(!std::filesystem::exists(prefix + ".pem"));
        CPPUNIT_ASSERT(!id.first);

        // A directory that does not exist: a clear error and nothing left behind.
        st = createIdentity(dir_ + "/no/such/dir/id", ecOptions(), id);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT(contains(st.message, "cannot create"));
    }

    void testPassword() {
        const std::string prefix = dir_ + "/secret";
        dht::crypto::Identity created;
        CPPUNIT_ASSERT(createIdentity(prefix, ecOptions("hunter2"), created));
        CPPUNIT_ASSERT(contains(readAll(prefix + ".pem"), "ENCRYPTED PRIVATE KEY"));

        dht::crypto::Identity loaded;
        auto st = loadIdentity(prefix, "", loaded);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT_MESSAGE(st.message, contains(st.message, "password is needed"));
        st = loadIdentity(prefix, "wrong", loaded);
        CPPUNIT_ASSERT_MESSAGE(st.message, contains(st.message, "wrong password"));
        CPPUNIT_ASSERT(!loaded.first);
        st = loadIdentity(prefix, "hunter2", loaded);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT(loaded.second->getId() == created.second->getId());
    }

    void testReferenceFiles() {
        // Files written by OpenDHT's own saveIdentity: a CA-signed identity, with and without password.
        auto ca = dht::crypto::generateEcIdentity("ref-ca");
        auto id = dht::crypto::generateEcIdentity("ref-node", ca);
        dht::crypto::saveIdentity(id, dir_ + "/ref");
        dht::crypto::saveIdentity(id, dir_ + "/refpw", "pass");

        dht::crypto::Identity loaded;
        auto st = loadIdentity(dir_ + "/ref", "", loaded);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT(loaded.second->getId() == id.second->getId());
        CPPUNIT_ASSERT(loaded.second->issuer); // the chain survives
        CPPUNIT_ASSERT(loaded.second->issuer->getId() == ca.second->getId());

        st = loadIdentity(dir_ + "/refpw", "pass", loaded);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT(loaded.first->getPublicKey().getLongId() == id.first->getPublicKey().getLongId());
    }

    void testRsaIdentitySignsValues() {
        // The default key type is RSA because 2.x nodes only check RSA value signatures.
        CreateIdentityOptions o;
        o.rsaBits = 2048; // the default 4096 is slow to generate in a test
        dht::crypto::Identity created;
        auto st = createIdentity(dir_ + "/rsa", o, created);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        dht::crypto::Identity loaded;
        CPPUNIT_ASSERT(loadIdentity(dir_ + "/rsa", "", loaded));
        dht::Value v(dht::Blob{1, 2, 3});
        v.sign(*loaded.first);
        CPPUNIT_ASSERT(v.checkSignature());
    }

    void testMissing() {
        dht::crypto::Identity out;
        auto st = loadIdentity(dir_ + "/nothing", "", out);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT_MESSAGE(st.message, contains(st.message, "missing"));
        CPPUNIT_ASSERT(contains(st.message, dir_ + "/nothing.pem"));

        // Key present, certificate missing.
        dht::crypto::Identity id;
        CPPUNIT_ASSERT(createIdentity(dir_ + "/half", ecOptions(), id));
        std::filesystem::remove(dir_ + "/half.crt");
        st = loadIdentity(dir_ + "/half", "", out);
        CPPUNIT_ASSERT(contains(st.message, "half.crt"));
        CPPUNIT_ASSERT(!out.first);
    }

    void testUnreadable() {
        // Tests may run as root, for whom permissions do not deny reading: use a directory.
        std::filesystem::create_directory(dir_ + "/dir.pem");
        writeAll(dir_ + "/dir.crt", "x");
        dht::crypto::Identity out;
        auto st = loadIdentity(dir_ + "/dir", "", out);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT_MESSAGE(st.message, contains(st.message, "not a regular file"));
    }

    void testCorrupt() {
        dht::crypto::Identity id, out;
        CPPUNIT_ASSERT(createIdentity(dir_ + "/c", ecOptions(), id));
        const std::string key = readAll(dir_ + "/c.pem"), crt = readAll(dir_ + "/c.crt");

        writeAll(dir_ + "/c.crt", "garbage\n");
        auto st = loadIdentity(dir_ + "/c", "", out);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT_MESSAGE(st.message, contains(st.message, "certificate file"));

        writeAll(dir_ + "/c.crt", crt.substr(0, crt.size() / 2)); // truncated
        st = loadIdentity(dir_ + "/c", "", out);
        CPPUNIT_ASSERT_MESSAGE(st.message, contains(st.message, "corrupt"));

        writeAll(dir_ + "/c.crt", crt);
        std::string badKey = key;
        badKey[badKey.size() / 2] = badKey[badKey.size() / 2] == 'A' ? 'B' : 'A'; // flip base64
        writeAll(dir_ + "/c.pem", badKey);
        st = loadIdentity(dir_ + "/c", "", out);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);

        writeAll(dir_ + "/c.pem", "");
        st = loadIdentity(dir_ + "/c", "", out);
        CPPUNIT_ASSERT_MESSAGE(st.message, contains(st.message, "empty"));

        writeAll(dir_ + "/c.pem", std::string(4096, '\0'));
        st = loadIdentity(dir_ + "/c", "", out);
        CPPUNIT_ASSERT_MESSAGE(st.message, contains(st.message, "private key file"));
        CPPUNIT_ASSERT(!out.first);
    }

    void testMismatched() {
        dht::crypto::Identity a, b, out;
        CPPUNIT_ASSERT(createIdentity(dir_ + "/a", ecOptions(), a));
        CPPUNIT_ASSERT(createIdentity(dir_ + "/b", ecOptions(), b));
        auto st = loadIdentity(dhtgate::tls::IdentityFiles{dir_ + "/a.pem", dir_ + "/b.crt"}, "", out);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT_MESSAGE(st.message, contains(st.message, "does not match"));
        CPPUNIT_ASSERT(!out.first);
    }

    void testLoadOrCreate() {
        const std::string prefix = dir_ + "/auto";
        dht::crypto::Identity first, second, out;
        bool created = true;
        auto st = dhtgate::tls::loadOrCreateIdentity(prefix, "", false, ecOptions(), out, &created);
        CPPUNIT_ASSERT(contains(st.message, "missing")); // no --identity-create: an error
        CPPUNIT_ASSERT(!created);
        CPPUNIT_ASSERT(!std::filesystem::exists(prefix + ".pem"));

        st = dhtgate::tls::loadOrCreateIdentity(prefix, "", true, ecOptions(), first, &created);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT(created);
        CPPUNIT_ASSERT_EQUAL(0600u, mode(prefix + ".pem"));
        st = dhtgate::tls::loadOrCreateIdentity(prefix, "", true, ecOptions(), second, &created);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        CPPUNIT_ASSERT(!created); // loaded, not regenerated
        CPPUNIT_ASSERT(first.second->getId() == second.second->getId());

        // Half an identity is an error, not a reason to generate a new one.
        std::filesystem::remove(prefix + ".crt");
        st = dhtgate::tls::loadOrCreateIdentity(prefix, "", true, ecOptions(), out, &created);
        CPPUNIT_ASSERT(st.code == dhtgate::errc::invalid_identity);
        CPPUNIT_ASSERT(contains(st.message, "auto.crt"));
        CPPUNIT_ASSERT(!created);
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(TlsIdentityStoreTest);
