#include "dhtgate/http_client.h"

#include "client/client_impl.h"
#include "client/request_op.h"

#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>
#include <http_parser.h>

#include <cstdlib>
#include <strings.h>
#include <thread>

namespace dhtgate::http {
namespace detail {

ClientImpl::ClientImpl(asio::io_context& ioContext, ClientOptions opts)
    : io(ioContext), options(std::move(opts)), pool(options.maxIdlePerHost, options.maxIdleTotal) {
    tls_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
    tls_->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                      asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    if (options.verifyPeer) {
        tls_->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert);
        if (!options.caPem.empty()) {
            tls_->add_certificate_authority(asio::buffer(options.caPem));
        } else if (const char* file = std::getenv("CA_ROOT_FILE"); file && *file) {
            tls_->load_verify_file(file); // the OpenDHT client's override (spec §10.4)
        } else if (const char* dir = std::getenv("CA_ROOT_PATH"); dir && *dir) {
            tls_->add_verify_path(dir);
        } else {
            tls_->set_default_verify_paths();
        }
    } else {
        tls_->set_verify_mode(asio::ssl::verify_none);
    }
    if (!options.clientCertificatePem.empty()) {
        tls_->use_certificate_chain(asio::buffer(options.clientCertificatePem));
        tls_->use_private_key(asio::buffer(options.clientKeyPem), asio::ssl::context::pem);
    }
}

void ClientImpl::shutdown() {
    stopped = true;
    auto ops = std::move(active);
    active.clear();
    for (auto& op : ops)
        op->abort();
    pool.clear();
}

} // namespace detail

namespace {
class StatusCategory final : public std::error_category {
public:
    const char* name() const noexcept override { return "http-status"; }
    std::string message(int status) const override {
        const char* reason = http_status_str(static_cast<http_status>(status));
        return "HTTP status " + std::to_string(status) + (reason && *reason != '<' ? std::string(" ") + reason : "");
    }
};
} // namespace

const std::error_category& statusCategory() {
    static const StatusCategory instance;
    return instance;
}

const std::string* Response::header(std::string_view name) const {
    for (const auto& h : headers)
        if (h.first.size() == name.size() && strncasecmp(h.first.data(), name.data(), name.size()) == 0)
            return &h.second;
    return nullptr;
}

void RequestHandle::cancel() {
    if (!state_ || state_->finished.exchange(true))
        return;
    asio::post(*state_->io, [op = state_->op] {
        if (auto o = op.lock())
            o->abort();
    });
}

bool RequestHandle::active() const {
    return state_ && !state_->finished;
}

namespace detail {
/// The internal io thread of a Client built without an io_context.
struct OwnThread {
    asio::io_context io;
    asio::executor_work_guard<asio::io_context::executor_type> guard{io.get_executor()};
    std::thread thread;
};
} // namespace detail

Client::Client(ClientOptions options) : own_(std::make_unique<detail::OwnThread>()) {
    impl_ = std::make_shared<detail::ClientImpl>(own_->io, std::move(options));
    own_->thread = std::thread([io = &own_->io] { io->run(); });
}

Client::Client(asio::io_context& io, ClientOptions options)
    : impl_(std::make_shared<detail::ClientImpl>(io, std::move(options))) {}

Client::~Client() {
    if (!own_) {
        impl_->shutdown();
        return;
    }
    asio::post(own_->io, [impl = impl_] { impl->shutdown(); });
    own_->guard.reset();
    // run() returns once the aborted operations have drained.
    if (own_->thread.joinable())
        own_->thread.join();
    impl_.reset();
}

RequestHandle Client::send(Request request, Callback done) {
    auto state = std::make_shared<detail::RequestState>();
    state->io = &impl_->io;
    auto op = std::make_shared<detail::RequestOp>(impl_, state, std::move(request), std::move(done));
    state->op = op;
    // Posted even on the io thread: send() never calls back from inside itself.
    asio::post(impl_->io, [op] { op->start(); });
    return RequestHandle(std::move(state));
}

asio::io_context& Client::ioContext() {
    return impl_->io;
}
const ClientOptions& Client::options() const {
    return impl_->options;
}

} // namespace dhtgate::http
