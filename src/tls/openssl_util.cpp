#include "tls/openssl_util.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <climits>

namespace dhtgate::tls {

void X509Deleter::operator()(X509* x) const noexcept {
    X509_free(x);
}
void EvpPkeyDeleter::operator()(EVP_PKEY* k) const noexcept {
    EVP_PKEY_free(k);
}
void BioDeleter::operator()(BIO* b) const noexcept {
    BIO_free(b);
}

X509Ptr shareX509(X509* x) noexcept {
    if (x)
        X509_up_ref(x);
    return X509Ptr(x);
}

EvpPkeyPtr shareKey(EVP_PKEY* k) noexcept {
    if (k)
        EVP_PKEY_up_ref(k);
    return EvpPkeyPtr(k);
}

std::string takeOpenSslErrors() {
    std::string out;
    char buf[256];
    while (unsigned long e = ERR_get_error()) {
        ERR_error_string_n(e, buf, sizeof(buf));
        if (!out.empty())
            out += "; ";
        out += buf;
    }
    return out;
}

Status parsePemCertificates(const std::string& pem, std::vector<X509Ptr>& out) {
    out.clear();
    ERR_clear_error(); // the end-of-input check below reads the queue: start from an empty one
    if (pem.size() > INT_MAX)
        return Status::fail(errc::invalid_identity, "certificate text too large");
    BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    if (!bio)
        return Status::fail(errc::invalid_identity, "out of memory: " + takeOpenSslErrors());
    while (true) {
        X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
        if (!cert)
            break;
        out.push_back(std::move(cert));
    }
    // Reading stops with a "no start line" error at the end of the text: that is the normal end.
    // Anything else (bad base64, bad DER) means a corrupt block.
    unsigned long last = ERR_peek_last_error();
    bool clean_end = ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE;
    if (last != 0 && !clean_end) {
        out.clear();
        return Status::fail(errc::invalid_identity, "malformed PEM certificate: " + takeOpenSslErrors());
    }
    ERR_clear_error();
    if (out.empty())
        return Status::fail(errc::invalid_identity, "no PEM certificate found");
    return Status::ok();
}

Status parsePemPrivateKey(const std::string& pem, EvpPkeyPtr& out) {
    ERR_clear_error();
    if (pem.size() > INT_MAX)
        return Status::fail(errc::invalid_identity, "private key too large");
    BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    // An empty passphrase: an unencrypted key never asks for one, an encrypted one fails.
    EvpPkeyPtr key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, const_cast<char*>("")) : nullptr);
    if (!key)
        return Status::fail(errc::invalid_identity, "cannot read the private key: " + takeOpenSslErrors());
    out = std::move(key);
    return Status::ok();
}

Status toPem(X509* cert, std::string& out) {
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio || !PEM_write_bio_X509(bio.get(), cert))
        return Status::fail(errc::invalid_identity, "cannot write certificate PEM: " + takeOpenSslErrors());
    char* data = nullptr;
    long len = BIO_get_mem_data(bio.get(), &data);
    out.assign(data, static_cast<std::size_t>(len));
    return Status::ok();
}

} // namespace dhtgate::tls
