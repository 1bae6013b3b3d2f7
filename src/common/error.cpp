#include "dhtgate/error.h"

namespace dhtgate {
namespace {

class Category final : public std::error_category {
public:
    const char* name() const noexcept override { return "dhtgate"; }
    std::string message(int value) const override {
        switch (static_cast<errc>(value)) {
        case errc::ok: return "success";
        case errc::bind_failed: return "cannot bind the listening address";
        case errc::invalid_config: return "invalid configuration";
        case errc::invalid_identity: return "invalid identity";
        case errc::invalid_url: return "invalid URL";
        case errc::resolve_failed: return "name resolution failed";
        case errc::connect_failed: return "connection failed";
        case errc::connect_timeout: return "connect timed out";
        case errc::request_timeout: return "request timed out";
        case errc::idle_timeout: return "connection idle for too long";
        case errc::tls_handshake_failed: return "TLS handshake failed";
        case errc::protocol_error: return "HTTP protocol error";
        case errc::response_too_large: return "response too large";
        case errc::connection_closed: return "connection closed before the response was complete";
        case errc::cancelled: return "cancelled";
        case errc::http_status: return "unexpected HTTP status";
        case errc::bad_response: return "unexpected response from the proxy";
        case errc::state_corrupt: return "state file is corrupt";
        case errc::state_io: return "state file input/output error";
        }
        return "unknown dhtgate error";
    }
};

} // namespace

const std::error_category& category() {
    static const Category instance;
    return instance;
}

} // namespace dhtgate
