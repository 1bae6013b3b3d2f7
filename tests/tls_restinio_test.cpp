// A RESTinio HTTPS server built from tls::makeServerContext serves a request to a client
// built from tls::makeClientContext over loopback. The only RESTinio TLS translation unit.
#include "tls/tls_context.h"

#include "support/test_identities.h"

#include <asio/read.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/write.hpp>
#include <cppunit/extensions/HelperMacros.h>
#include <restinio/all.hpp>
#include <restinio/tls.hpp>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>

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
        stream_.async_handshake(asio::ssl::stream_base::client, [self](std::error_code ec) { self->onHandshake(ec); });
    }
    void onHandshake(std::error_code ec) {
        result_.verifyReason = dhtgate::tls::verifyFailureReason(stream_.native_handle());
        if (ec)
            return done(ec);
        auto self = shared_from_this();
        asio::async_write(stream_, asio::buffer(request_), [self](std::error_code ec, std::size_t) {
            if (ec)
                return self->done(ec);
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

} // namespace

class TlsRestinioTest : public CppUnit::TestFixture {
    CPPUNIT_TEST_SUITE(TlsRestinioTest);
    CPPUNIT_TEST(testHttpsRequest);
    CPPUNIT_TEST_SUITE_END();

public:
    void testHttpsRequest() {
        auto ca = dhtgate::test::makeCa("restinio-ca");
        dhtgate::test::LeafSpec spec;
        spec.dnsNames = {"localhost"};
        auto identity = dhtgate::test::makeLeaf(ca, spec);

        std::optional<asio::ssl::context> serverCtx, clientCtx, otherCtx;
        dhtgate::tls::ServerTlsOptions so;
        so.identity = identity;
        CPPUNIT_ASSERT(dhtgate::tls::makeServerContext(so, serverCtx));
        dhtgate::tls::ClientTlsOptions co;
        co.trusted = {ca.second};
        CPPUNIT_ASSERT(dhtgate::tls::makeClientContext(co, clientCtx));
        dhtgate::tls::ClientTlsOptions other;
        other.trusted = {dhtgate::test::makeCa("unrelated").second};
        CPPUNIT_ASSERT(dhtgate::tls::makeClientContext(other, otherCtx));

        asio::io_context io;
        std::promise<std::uint16_t> portPromise;
        auto portFuture = portPromise.get_future();
        restinio::server_settings_t<Traits> settings;
        settings.address("127.0.0.1")
            .port(0)
            .tls_context(std::move(*serverCtx))
            .acceptor_post_bind_hook(
                [&](tcp::acceptor& acceptor) { portPromise.set_value(acceptor.local_endpoint().port()); })
            .request_handler([](auto req) {
                return req->create_response().set_body("hello over tls").done();
            });
        restinio::http_server_t<Traits> server(restinio::external_io_context(io), std::move(settings));
        asio::post(io, [&] { server.open_sync(); });
        std::thread ioThread([&] { io.run(); });
        auto stop = [&] {
            asio::post(io, [&] {
                server.close_sync();
                io.stop();
            });
            ioThread.join();
        };

        if (portFuture.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
            stop();
            CPPUNIT_FAIL("server did not start");
        }
        const auto port = portFuture.get();

        auto ok = std::make_shared<HttpsGet>(io, *clientCtx);
        auto okFuture = ok->start(port, "localhost");
        auto bad = std::make_shared<HttpsGet>(io, *otherCtx);
        auto badFuture = bad->start(port, "localhost");
        const bool okReady = okFuture.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
        const bool badReady = badFuture.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
        stop();
        CPPUNIT_ASSERT(okReady && badReady);

        auto r = okFuture.get();
        CPPUNIT_ASSERT_MESSAGE(r.handshake.message() + " " + r.verifyReason, !r.handshake);
        CPPUNIT_ASSERT_MESSAGE(r.response, r.response.rfind("HTTP/1.1 200", 0) == 0);
        CPPUNIT_ASSERT(r.response.find("hello over tls") != std::string::npos);

        auto rejected = badFuture.get();
        CPPUNIT_ASSERT(rejected.handshake);
        CPPUNIT_ASSERT(rejected.response.empty());
    }
};
CPPUNIT_TEST_SUITE_REGISTRATION(TlsRestinioTest);
