// A RESTinio HTTPS server built from tls::makeServerContext serves a request to a client
// built from tls::makeClientContext, and to OpenDHT's own HTTP client, over loopback.
// The only RESTinio TLS translation unit.
#include "tls/tls_context.h"

#include "tls/identity_store.h"

#include "support/test_identities.h"

#include <asio/read.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/write.hpp>
#include <cppunit/extensions/HelperMacros.h>
#include <opendht/http.h>
#include <restinio/all.hpp>
#include <restinio/tls.hpp>

#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace {

using Traits = restinio::single_thread_tls_traits_t<restinio::asio_timer_manager_t, restinio::null_logger_t>;
using tcp = asio::ip::tcp;

struct ClientResult {
    std::error_code handshake;
    std::string response;
    std::string verifyReason;
};

// One HTTPS GET, all on the server's io thread; the result arrives through a promise.
class HttpsGet : public std::enable_shared_from_this<HttpsGet> {
public:
    HttpsGet(asio::io_context& io, asio::ssl::context& ctx) : stream_(io, ctx) {}

    /// Called from the test thread: everything else happens on the io thread.
    std::future<ClientResult> start(std::uint16_t port, const std::string& host) {
        auto prep = dhtgate::tls::prepareClientSession(stream_.native_handle(), host);
        CPPUNIT_ASSERT_MESSAGE(prep.message, bool(prep));
        request_ = "GET /hello HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
        auto future = promise_.get_future();
        asio::post(stream_.get_executor(), [self = shared_from_this(), port] { self->doConnect(port); });
        return future;
    }

private:
    void doConnect(std::uint16_t port) {
        auto self = shared_from_this();
        stream_.lowest_layer().async_connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port),
                                             [self](std::error_code ec) { self->onConnect(ec); });
    }
    void onConnect(std::error_code ec) {
        if (ec)
            return done(ec);
        auto self = shared_from_this();
        stream_.async_handshake(asio::ssl::stream_base::client,
                                [self](std::error_code hec) { self->onHandshake(hec); });
    }
    void onHandshake(std::error_code ec) {
        result_.verifyReason = dhtgate::tls::verifyFailureReason(stream_.native_handle());
        if (ec)
            return done(ec);
        auto self = shared_from_this();
        asio::async_write(stream_, asio::buffer(request_), [self](std::error_code wec, std::size_t) {
            if (wec)
                return self->done(wec);
            asio::async_read(self->stream_, asio::dynamic_buffer(self->result_.response),
                             [self](std::error_code, std::size_t) { self->done({}); });
        });
    }
    void done(std::error_code handshake) {
        result_.handshake = handshake;
        promise_.set_value(result_);
        stream_.lowest_layer().close();
    }

    asio::ssl::stream<tcp::socket> stream_;
    std::string request_;
    ClientResult result_;
    std::promise<ClientResult> promise_;
};

// A RESTinio HTTPS server on 127.0.0.1:0 answering every request with "hello over tls",
// running on its own io thread.
class HttpsServer {
public:
    explicit HttpsServer(const dht::crypto::Identity& identity) {
        std::optional<asio::ssl::context> ctx;
        dhtgate::tls::ServerTlsOptions so;
        so.identity = identity;
        auto st = dhtgate::tls::makeServerContext(so, ctx);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));

        std::promise<std::uint16_t> portPromise;
        auto portFuture = portPromise.get_future();
        restinio::server_settings_t<Traits> settings;
        settings.address("127.0.0.1")
            .port(0)
            .tls_context(std::move(*ctx))
            .acceptor_post_bind_hook(
                [&](tcp::acceptor& acceptor) { portPromise.set_value(acceptor.local_endpoint().port()); })
            .request_handler([](auto req) { return req->create_response().set_body("hello over tls").done(); });
        server_ =
            std::make_unique<restinio::http_server_t<Traits>>(restinio::external_io_context(io_), std::move(settings));
        asio::post(io_, [this] { server_->open_sync(); });
        thread_ = std::thread([this] { io_.run(); });
        if (portFuture.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
            stop();
            CPPUNIT_FAIL("server did not start");
        }
        port_ = portFuture.get();
    }
    ~HttpsServer() { stop(); }

    asio::io_context& io() { return io_; }
    std::uint16_t port() const { return port_; }

    void stop() {
        if (!thread_.joinable())
            return;
        asio::post(io_, [this] {
            server_->close_sync();
            io_.stop();
        });
        thread_.join();
    }

private:
    asio::io_context io_;
    std::unique_ptr<restinio::http_server_t<Traits>> server_;
    std::thread thread_;
    std::uint16_t port_{0};
};

} // namespace

class TlsRestinioTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(TlsRestinioTest);
    CPPUNIT_TEST(testHttpsRequest);
    CPPUNIT_TEST(testReferenceClient);
    CPPUNIT_TEST(testReferenceClientSelfSigned);
    CPPUNIT_TEST_SUITE_END();

    dht::crypto::Identity ca_;
    dht::crypto::Identity identity_;

public:
    void setUp() override {
        ca_ = dhtgate::test::makeCa("restinio-ca");
        dhtgate::test::LeafSpec spec;
        spec.dnsNames = {"localhost"};
        identity_ = dhtgate::test::makeLeaf(ca_, spec);
    }

    void testHttpsRequest() {
        std::optional<asio::ssl::context> clientCtx, otherCtx;
        dhtgate::tls::ClientTlsOptions co;
        co.trusted = {ca_.second};
        CPPUNIT_ASSERT(dhtgate::tls::makeClientContext(co, clientCtx));
        dhtgate::tls::ClientTlsOptions other;
        other.trusted = {dhtgate::test::makeCa("unrelated").second};
        CPPUNIT_ASSERT(dhtgate::tls::makeClientContext(other, otherCtx));

        HttpsServer server(identity_);
        auto ok = std::make_shared<HttpsGet>(server.io(), *clientCtx);
        auto okFuture = ok->start(server.port(), "localhost");
        auto bad = std::make_shared<HttpsGet>(server.io(), *otherCtx);
        auto badFuture = bad->start(server.port(), "localhost");
        const bool okReady = okFuture.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
        const bool badReady = badFuture.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
        server.stop();
        CPPUNIT_ASSERT(okReady && badReady);

        auto r = okFuture.get();
        CPPUNIT_ASSERT_MESSAGE(r.handshake.message() + " " + r.verifyReason, !r.handshake);
        CPPUNIT_ASSERT_MESSAGE(r.response, r.response.rfind("HTTP/1.1 200", 0) == 0);
        CPPUNIT_ASSERT(r.response.find("hello over tls") != std::string::npos);

        auto rejected = badFuture.get();
        CPPUNIT_ASSERT(rejected.handshake);
        CPPUNIT_ASSERT(rejected.response.empty());
    }

    // OpenDHT 2.4.12's own HTTP client (what its proxy client uses), pinning the CA as
    // Config::server_ca does, accepts the server context and its chain.
    void testReferenceClient() {
        HttpsServer server(identity_);
        auto pinnedOk = referenceGet(server.port(), ca_.second);
        auto pinnedOther = referenceGet(server.port(), dhtgate::test::makeCa("unrelated").second);
        server.stop();
        CPPUNIT_ASSERT_EQUAL(200u, pinnedOk.first);
        CPPUNIT_ASSERT_EQUAL(std::string("hello over tls"), pinnedOk.second);
        CPPUNIT_ASSERT_EQUAL(0u, pinnedOther.first); // it does verify: a transport failure
    }

    // Which self-signed server identities a 2.x client accepts when it pins the identity's
    // own certificate (Config::server_ca = id.crt): a createIdentity one (end-entity, SANs) yes;
    // OpenDHT's default one (a CA certificate without TLS key usage) no.
    void testReferenceClientSelfSigned() {
        char dir[] = "/tmp/dhtgate-restinio-XXXXXX";
        CPPUNIT_ASSERT(mkdtemp(dir));
        dhtgate::tls::CreateIdentityOptions o;
        o.keyType = dhtgate::tls::CreateIdentityOptions::KeyType::ec;
        dht::crypto::Identity created;
        auto st = dhtgate::tls::createIdentity(std::string(dir) + "/id", o, created);
        std::filesystem::remove_all(dir);
        CPPUNIT_ASSERT_MESSAGE(st.message, bool(st));
        {
            HttpsServer server(created);
            // By address: with "localhost" the reference client may report its failed ::1
            // attempt (the server listens on 127.0.0.1) before trying 127.0.0.1.
            auto r = referenceGet(server.port(), created.second, "127.0.0.1");
            CPPUNIT_ASSERT_EQUAL(200u, r.first);
        }
        auto openDhtDefault = dht::crypto::generateEcIdentity("localhost");
        HttpsServer server(openDhtDefault);
        auto r = referenceGet(server.port(), openDhtDefault.second);
        CPPUNIT_ASSERT_EQUAL(0u, r.first);
    }

private:
    // One GET with OpenDHT's client; {0, ""} if it failed or got no answer within 10 s.
    static std::pair<unsigned, std::string> referenceGet(std::uint16_t port,
                                                         std::shared_ptr<dht::crypto::Certificate> ca,
                                                         const std::string& host = "localhost") {
        asio::io_context io;
        std::promise<std::pair<unsigned, std::string>> done;
        auto result = done.get_future();
        auto request = std::make_shared<dht::http::Request>(
            io, "https://" + host + ":" + std::to_string(port) + "/hello",
            [&done, fired = false](const dht::http::Response& response) mutable {
                if (!std::exchange(fired, true)) // the reference may also report its own teardown
                    done.set_value({response.status_code, response.body});
            });
        request->set_certificate_authority(std::move(ca));
        request->send();
        std::thread thread([&] { io.run_for(std::chrono::seconds(10)); });
        const bool ready = result.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
        io.stop();
        thread.join();
        return ready ? result.get() : std::pair<unsigned, std::string>{0, ""};
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(TlsRestinioTest);
