// dhtgate: error codes reported through std::error_code by every asynchronous path.
#pragma once

#include <string>
#include <system_error>

namespace dhtgate {

enum class errc {
    ok = 0,
    // Configuration and start-up
    bind_failed = 1,       ///< the listening address could not be bound (e.g. port in use)
    invalid_config,        ///< a configuration value is out of range or inconsistent
    invalid_identity,      ///< an identity (key/certificate) is missing, corrupt or mismatched
    // HTTP client
    invalid_url = 20,      ///< the URL could not be parsed or has an unsupported scheme
    resolve_failed,        ///< name resolution found no usable address
    connect_failed,        ///< no resolved address accepted a connection
    connect_timeout,       ///< the connect phase exceeded its timeout
    request_timeout,       ///< the whole request exceeded its timeout
    idle_timeout,          ///< no byte arrived within the idle timeout
    tls_handshake_failed,  ///< TLS negotiation or certificate verification failed
    protocol_error,        ///< the peer sent something that is not valid HTTP
    response_too_large,    ///< the response exceeded the configured maximum size
    connection_closed,     ///< the peer closed the connection before the response was complete
    cancelled,             ///< the operation was cancelled by its owner
    http_status,           ///< the peer answered with a non-success status
    // Proxy protocol
    bad_response = 40,     ///< the proxy answered with a body that is not what the protocol says
    // State
    state_corrupt = 60,    ///< a state file could not be decoded
    state_io,              ///< a state file could not be read or written
};

const std::error_category& category();

inline std::error_code make_error_code(errc e) { return {static_cast<int>(e), category()}; }

} // namespace dhtgate

namespace std {
template <>
struct is_error_code_enum<dhtgate::errc> : true_type {};
} // namespace std
