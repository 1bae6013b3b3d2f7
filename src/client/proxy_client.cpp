#include "dhtgate/proxy_client.h"

#include "client/listen_session.h"
#include "client/proxy_client_impl.h"
#include "client/proxy_json.h"
#include "codec/value_codec.h"
#include "dhtgate/error.h"

#include <asio/post.hpp>

#include <future>
#include <unordered_map>

namespace dhtgate {
namespace detail {
namespace {

http::ClientOptions transportOptions(const ProxyClientOptions& options) {
    http::ClientOptions o = options.http;
    if (!o.logger.enabled(LogLevel::error))
        o.logger = options.logger;
    return o;
}

http::detail::Url parseBase(const std::string& url) {
    http::detail::Url base;
    if (auto ec = http::detail::parseUrl(url, base))
        throw std::system_error(ec, "proxy URL '" + url + "'");
    return base;
}

/// dht::Value is move-only: copy the wire-visible fields (what valueJson encodes).
std::shared_ptr<dht::Value> cloneValue(const dht::Value& v) {
    auto c = std::make_shared<dht::Value>(v.id);
    c->owner = v.owner;
    c->recipient = v.recipient;
    c->type = v.type;
    c->data = v.data;
    c->user_type = v.user_type;
    c->seq = v.seq;
    c->signature = v.signature;
    c->cypher = v.cypher;
    c->priority = v.priority;
    return c;
}

} // namespace

ProxyClientImpl::ProxyClientImpl(asio::io_context* callerIo, ProxyClientOptions opts)
    : options(std::move(opts)), ownThread(callerIo == nullptr), base_(parseBase(options.url)) {
    http = callerIo ? std::make_unique<http::Client>(*callerIo, transportOptions(options))
                    : std::make_unique<http::Client>(transportOptions(options));
    const auto authority = base_.authority(); // scheme://host:port
    root_ = authority;
}

bool ProxyClientImpl::onIoThread() const {
    return http->ioContext().get_executor().running_in_this_thread();
}

std::string ProxyClientImpl::keyUrl(const dht::InfoHash& key, std::string_view suffix) const {
    // Key routes always start at the root, whatever path the proxy URL has (spec §10.1).
    return root_ + "/key/" + key.toString() + std::string(suffix);
}

http::Request ProxyClientImpl::request(std::string method, std::string url) const {
    http::Request req(std::move(method), std::move(url));
    req.addHeader("Accept", "*/*").addHeader("Content-Type", "application/json");
    req.setRequestTimeout(options.requestTimeout);
    return req;
}

void ProxyClientImpl::get(const dht::InfoHash& key, ProxyClient::GetCallback done, dht::Value::Filter filter) {
    struct State {
        ProxyClient::Values values;
        std::unordered_map<dht::Value::Id, std::size_t> index;
        unsigned status{0};
    };
    auto state = std::make_shared<State>();
    auto req = request("GET", keyUrl(key));
    req.setOnHeaders([state](const http::Response& head) {
        state->status = head.status;
        return true;
    });
    req.setOnLine([state, this](std::string_view line) {
        if (state->status != 200 || line.empty() || line == "{}")
            return true;
        bool expired = false;
        codec::ParseError err;
        auto value = codec::parseValueLine(line, expired, err);
        if (!value) {
            options.logger.debug("[proxy-client] get: skipping line: {}", err.reason);
            return true;
        }
        // The same id can come from several storing nodes: keep the newest edit.
        auto [it, inserted] = state->index.emplace(value->id, state->values.size());
        if (inserted)
            state->values.push_back(std::move(value));
        else if (value->seq > state->values[it->second]->seq)
            state->values[it->second] = std::move(value);
        return true;
    });
    http->send(std::move(req), [weak = weak_from_this(), state, done = std::move(done),
                                filter = std::move(filter)](std::error_code ec, http::Response r) {
        auto self = weak.lock();
        if (!self || self->stopped)
            return;
        if (ec)
            return done(ec, {});
        if (r.status != 200)
            return done(http::statusError(r.status), {});
        ProxyClient::Values values;
        for (auto& v : state->values)
            if (!filter || filter(*v))
                values.push_back(std::move(v));
        done({}, std::move(values));
    });
}

void ProxyClientImpl::put(const dht::InfoHash& key, std::shared_ptr<dht::Value> value, ProxyClient::PutCallback done,
                          bool permanent) {
    if (!value)
        return asio::post(http->ioContext(),
                          [done = std::move(done)] { done(make_error_code(errc::invalid_config), {}); });
    auto sent = cloneValue(*value);
    sendPut(key, sent, permanent,
            [weak = weak_from_this(), key, sent, permanent,
             done = std::move(done)](std::error_code ec, std::shared_ptr<dht::Value> stored) {
                auto self = weak.lock();
                if (!self || self->stopped)
                    return;
                if (!ec && permanent) {
                    sent->id = stored->id;
                    auto entry = std::make_shared<PermanentPut>(self->http->ioContext(), key, sent);
                    auto& slot = self->permanents_[{key, sent->id}];
                    if (slot)
                        slot->timer.cancel();
                    slot = entry;
                    self->startPermanentRefresh(entry, self->options.permanentRefresh);
                }
                done(ec, std::move(stored));
            });
}

void ProxyClientImpl::sendPut(const dht::InfoHash& key, std::shared_ptr<dht::Value> value, bool permanent,
                              ProxyClient::PutCallback done) {
    std::string body = codec::valueJson(*value);
    if (permanent) // the reference client's form (spec §6.1): members need no particular order
        body.insert(body.size() - 1, ",\"permanent\":true");
    auto req = request("POST", keyUrl(key));
    req.setBody(std::move(body));
    http->send(std::move(req), [done = std::move(done)](std::error_code ec, http::Response r) {
        if (ec)
            return done(ec, {});
        if (r.status != 200)
            return done(http::statusError(r.status), {});
        bool expired = false;
        codec::ParseError err;
        auto stored = codec::parseValueLine(r.body, expired, err);
        if (!stored)
            return done(make_error_code(errc::bad_response), {});
        done({}, std::move(stored));
    });
}

void ProxyClientImpl::startPermanentRefresh(const std::shared_ptr<PermanentPut>& entry,
                                            std::chrono::milliseconds after) {
    entry->timer.expires_after(after);
    entry->timer.async_wait(
        [weak = weak_from_this(), w = std::weak_ptr<PermanentPut>(entry)](const std::error_code& ec) {
            auto self = weak.lock();
            auto entry = w.lock();
            if (ec == asio::error::operation_aborted || !self || !entry || self->stopped)
                return;
            self->options.logger.debug("[proxy-client] refreshing permanent put {} on {}", entry->value->id,
                                       entry->key.toString());
            self->sendPut(entry->key, entry->value, true, [weak, w](std::error_code ec, std::shared_ptr<dht::Value>) {
                auto self = weak.lock();
                auto entry = w.lock();
                if (!self || !entry || self->stopped)
                    return;
                if (ec)
                    self->options.logger.warn("[proxy-client] permanent put {} refresh failed: {}", entry->value->id,
                                              ec.message());
                self->startPermanentRefresh(entry, ec ? self->options.permanentRetry : self->options.permanentRefresh);
            });
        });
}

void ProxyClientImpl::cancelPut(const dht::InfoHash& key, dht::Value::Id id) {
    auto it = permanents_.find({key, id});
    if (it == permanents_.end())
        return;
    it->second->timer.cancel();
    permanents_.erase(it);
}

void ProxyClientImpl::listen(ProxyClient::ListenToken token, const dht::InfoHash& key, ProxyClient::ListenCallback cb,
                             dht::Value::Filter filter) {
    if (stopped)
        return;
    auto session = std::make_shared<ListenSession>(weak_from_this(), http->ioContext(), token, key, std::move(cb),
                                                   std::move(filter));
    listens_[token] = session;
    session->open();
}

void ProxyClientImpl::cancelListen(ProxyClient::ListenToken token) {
    auto it = listens_.find(token);
    if (it == listens_.end())
        return;
    auto session = std::move(it->second);
    listens_.erase(it);
    session->cancel();
}

void ProxyClientImpl::nodeInfo(ProxyClient::NodeInfoCallback done) {
    auto req = request("GET", root_ + base_.target);
    http->send(std::move(req), [weak = weak_from_this(), done = std::move(done)](std::error_code ec, http::Response r) {
        auto self = weak.lock();
        if (!self || self->stopped)
            return;
        NodeInfo info;
        if (!ec && r.status != 200)
            ec = http::statusError(r.status);
        else if (!ec && !parseNodeInfo(r.body, info))
            ec = make_error_code(errc::bad_response);
        done(ec, std::move(info));
    });
}

void ProxyClientImpl::stats(ProxyClient::StatsCallback done) {
    auto req = request("GET", root_ + "/node/stats");
    http->send(std::move(req), [weak = weak_from_this(), done = std::move(done)](std::error_code ec, http::Response r) {
        auto self = weak.lock();
        if (!self || self->stopped)
            return;
        ProxyStats stats;
        if (!ec && r.status != 200)
            ec = http::statusError(r.status);
        else if (!ec && !parseStats(r.body, stats))
            ec = make_error_code(errc::bad_response);
        done(ec, std::move(stats));
    });
}

void ProxyClientImpl::shutdown() {
    stopped = true;
    for (auto& [token, session] : listens_)
        session->cancel();
    listens_.clear();
    for (auto& [id, entry] : permanents_)
        entry->timer.cancel();
    permanents_.clear();
}

} // namespace detail

ProxyClient::ProxyClient(ProxyClientOptions options)
    : impl_(std::make_shared<detail::ProxyClientImpl>(nullptr, std::move(options))) {}

ProxyClient::ProxyClient(asio::io_context& io, ProxyClientOptions options)
    : impl_(std::make_shared<detail::ProxyClientImpl>(&io, std::move(options))) {}

ProxyClient::~ProxyClient() {
    if (impl_->ownThread && !impl_->onIoThread()) {
        std::promise<void> done;
        asio::post(impl_->http->ioContext(), [&] {
            impl_->shutdown();
            done.set_value();
        });
        done.get_future().wait();
    } else {
        impl_->shutdown();
    }
    // Joins the internal thread (own-thread mode) after the aborted operations drained.
    impl_->http.reset();
}

void ProxyClient::get(const dht::InfoHash& key, GetCallback done, dht::Value::Filter filter) {
    impl_->onIo([impl = impl_, key, done = std::move(done), filter = std::move(filter)]() mutable {
        impl->get(key, std::move(done), std::move(filter));
    });
}

void ProxyClient::get(const dht::InfoHash& key, dht::Value::Id id, GetCallback done) {
    get(key, std::move(done), [id](const dht::Value& v) { return v.id == id; });
}

void ProxyClient::put(const dht::InfoHash& key, std::shared_ptr<dht::Value> value, PutCallback done, bool permanent) {
    impl_->onIo([impl = impl_, key, value = std::move(value), done = std::move(done), permanent]() mutable {
        impl->put(key, std::move(value), std::move(done), permanent);
    });
}

void ProxyClient::cancelPut(const dht::InfoHash& key, dht::Value::Id id) {
    impl_->onIo([impl = impl_, key, id] { impl->cancelPut(key, id); });
}

ProxyClient::ListenToken ProxyClient::listen(const dht::InfoHash& key, ListenCallback callback,
                                             dht::Value::Filter filter) {
    const ListenToken token = impl_->nextToken++;
    impl_->onIo([impl = impl_, token, key, cb = std::move(callback), filter = std::move(filter)]() mutable {
        impl->listen(token, key, std::move(cb), std::move(filter));
    });
    return token;
}

void ProxyClient::cancelListen(ListenToken token) {
    impl_->onIo([impl = impl_, token] { impl->cancelListen(token); });
}

void ProxyClient::nodeInfo(NodeInfoCallback done) {
    impl_->onIo([impl = impl_, done = std::move(done)]() mutable { impl->nodeInfo(std::move(done)); });
}

void ProxyClient::stats(StatsCallback done) {
    impl_->onIo([impl = impl_, done = std::move(done)]() mutable { impl->stats(std::move(done)); });
}

asio::io_context& ProxyClient::ioContext() {
    return impl_->http->ioContext();
}

} // namespace dhtgate
