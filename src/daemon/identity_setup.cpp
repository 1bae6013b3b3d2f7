#include "daemon/identity_setup.h"

#include "tls/identity_store.h"

#include <cstdlib>

namespace dhtgate::daemon {

bool setupIdentity(const Options& o, std::shared_ptr<dht::crypto::Identity>& identity, std::string& error,
                   bool* created) {
    identity.reset();
    if (created)
        *created = false;
    if (o.identity.empty()) {
        if (o.server.https_port)
            error = "--https-port needs --identity PATH";
        else if (o.identity_create)
            error = "--identity-create needs --identity PATH";
        else if (!o.identity_password.empty())
            error = "--identity-password needs --identity PATH";
        else if (!o.server.serve_http)
            error = "--no-http needs --identity PATH and --https-port N";
        return error.empty();
    }
    if (!o.server.serve_http && !o.server.https_port) {
        error = "--no-http needs --https-port N";
        return false;
    }
    std::string password = o.identity_password;
    if (password.empty())
        if (const char* env = std::getenv("DHTGATE_IDENTITY_PASSWORD"))
            password = env;
    try {
        dht::crypto::Identity id;
        tls::CreateIdentityOptions createOptions; // RSA 4096, SAN localhost, 127.0.0.1, ::1
        createOptions.password = password;
        const auto st = tls::loadOrCreateIdentity(o.identity, password, o.identity_create, createOptions, id, created);
        if (!st) {
            error = "identity: " + st.message;
            return false;
        }
        identity = std::make_shared<dht::crypto::Identity>(std::move(id));
        return true;
    } catch (const std::exception& e) { // loadOrCreateIdentity is noexcept; belt and braces
        error = std::string("identity: ") + e.what();
        return false;
    }
}

} // namespace dhtgate::daemon
