#include "tls/identity_store.h"

#include "tls/certificate_builder.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <openssl/crypto.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>

namespace dhtgate::tls {
namespace {

// Identity files are a few KiB; anything much larger is not one (and must not be slurped).
constexpr off_t kMaxFileSize = 1 << 20;

Status fail(const std::string& message) {
    return Status::fail(errc::invalid_identity, message);
}

std::string quoted(const std::string& path) {
    return "'" + path + "'";
}

// Wipes a buffer that held key material when it goes out of scope.
struct Wipe {
    std::string& s;
    ~Wipe() {
        if (!s.empty())
            OPENSSL_cleanse(s.data(), s.size());
    }
};

struct Fd {
    int fd{-1};
    ~Fd() {
        if (fd >= 0)
            ::close(fd);
    }
};

Status readFile(const std::string& path, const char* what, std::string& out) {
    Fd f;
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return fail(std::string(what) + " file " + quoted(path) + " is missing");
        return fail(std::string(what) + " file " + quoted(path) + " is unreadable: " + std::strerror(e));
    }
    struct stat st {};
    if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
        return fail(std::string(what) + " file " + quoted(path) + " is not a regular file");
    if (st.st_size > kMaxFileSize)
        return fail(std::string(what) + " file " + quoted(path) + " is too large to be an identity file");
    out.clear();
    char buf[4096];
    while (true) {
        ssize_t n = ::read(f.fd, buf, sizeof(buf));
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            OPENSSL_cleanse(buf, sizeof(buf));
            return fail(std::string(what) + " file " + quoted(path) + " is unreadable: " + std::strerror(e));
        }
        out.append(buf, static_cast<std::size_t>(n));
        if (out.size() > static_cast<std::size_t>(kMaxFileSize))
            return fail(std::string(what) + " file " + quoted(path) + " is too large to be an identity file");
    }
    OPENSSL_cleanse(buf, sizeof(buf));
    if (out.empty())
        return fail(std::string(what) + " file " + quoted(path) + " is empty");
    return Status::ok();
}

Status parseKey(const std::string& text, const std::string& password, const std::string& path,
                std::shared_ptr<dht::crypto::PrivateKey>& out) {
    gnutls_x509_privkey_t key = nullptr;
    if (int err = gnutls_x509_privkey_init(&key))
        return fail(std::string("cannot read the private key: ") + gnutls_strerror(err));
    const gnutls_datum_t data{reinterpret_cast<unsigned char*>(const_cast<char*>(text.data())),
                              static_cast<unsigned>(text.size())};
    const char* pw = password.empty() ? nullptr : password.c_str();
    int err = gnutls_x509_privkey_import2(key, &data, GNUTLS_X509_FMT_PEM, pw, 0);
    if (err != GNUTLS_E_SUCCESS && err != GNUTLS_E_DECRYPTION_FAILED)
        err = gnutls_x509_privkey_import2(key, &data, GNUTLS_X509_FMT_DER, pw, 0);
    if (err != GNUTLS_E_SUCCESS) {
        gnutls_x509_privkey_deinit(key);
        if (err == GNUTLS_E_DECRYPTION_FAILED)
            return fail(
                "private key file " + quoted(path) +
                (password.empty() ? " is encrypted: a password is needed" : " cannot be decrypted: wrong password"));
        return fail("private key file " + quoted(path) + " is corrupt or not a private key (" + gnutls_strerror(err) +
                    ")");
    }
    out = std::make_shared<dht::crypto::PrivateKey>(key); // takes ownership of key
    return Status::ok();
}

Status parseCertificate(const std::string& text, const std::string& path,
                        std::shared_ptr<dht::crypto::Certificate>& out) {
    try {
        auto cert = std::make_shared<dht::crypto::Certificate>(
            dht::Blob(reinterpret_cast<const uint8_t*>(text.data()),
                      reinterpret_cast<const uint8_t*>(text.data()) + text.size()));
        if (!*cert)
            return fail("certificate file " + quoted(path) + " holds no certificate");
        out = std::move(cert);
        return Status::ok();
    } catch (const std::exception& e) {
        return fail("certificate file " + quoted(path) + " is corrupt or not a certificate chain (" + e.what() + ")");
    }
}

Status load(const IdentityFiles& files, const std::string& password, dht::crypto::Identity& out) {
    std::string keyText, certText;
    Wipe wipe{keyText};
    if (auto s = readFile(files.key, "private key", keyText); !s)
        return s;
    if (auto s = readFile(files.certificate, "certificate", certText); !s)
        return s;
    dht::crypto::Identity id;
    if (auto s = parseKey(keyText, password, files.key, id.first); !s)
        return s;
    if (auto s = parseCertificate(certText, files.certificate, id.second); !s)
        return s;
    if (id.first->getPublicKey().getLongId() != id.second->getPublicKey().getLongId())
        return fail("private key " + quoted(files.key) + " does not match certificate " + quoted(files.certificate));
    out = std::move(id);
    return Status::ok();
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 || errno != ENOENT;
}

// Creates `path` (never replacing an existing file) with mode 0600, whatever the umask.
Status writeNewFile(const std::string& path, const std::string& data) {
    Fd f;
    f.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (f.fd < 0)
        return fail("cannot create " + quoted(path) + ": " + std::strerror(errno));
    auto failed = [&](const char* step) {
        int e = errno;
        ::unlink(path.c_str());
        return fail(std::string("cannot ") + step + " " + quoted(path) + ": " + std::strerror(e));
    };
    if (::fchmod(f.fd, 0600) != 0)
        return failed("set permissions of");
    for (std::size_t done = 0; done < data.size();) {
        ssize_t n = ::write(f.fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return failed("write");
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(f.fd) != 0)
        return failed("sync");
    return Status::ok();
}

Status exportKey(const dht::crypto::PrivateKey& key, const std::string& password, std::string& out) {
    gnutls_datum_t pem{nullptr, 0};
    int err = password.empty() ? gnutls_x509_privkey_export2_pkcs8(key.x509_key, GNUTLS_X509_FMT_PEM, nullptr,
                                                                   GNUTLS_PKCS_PLAIN, &pem)
                               : gnutls_x509_privkey_export2_pkcs8(key.x509_key, GNUTLS_X509_FMT_PEM, password.c_str(),
                                                                   GNUTLS_PKCS_PBES2_AES_256, &pem);
    if (err)
        return fail(std::string("cannot export the private key: ") + gnutls_strerror(err));
    out.assign(reinterpret_cast<const char*>(pem.data), pem.size);
    OPENSSL_cleanse(pem.data, pem.size);
    gnutls_free(pem.data);
    return Status::ok();
}

Status create(const IdentityFiles& files, const CreateIdentityOptions& options, dht::crypto::Identity& out) {
    // Check first: generating an RSA key takes seconds, and must not be wasted on a refusal.
    for (const auto& path : {files.key, files.certificate})
        if (exists(path))
            return fail("identity file " + quoted(path) + " already exists; not overwriting it");

    auto key = std::make_shared<dht::crypto::PrivateKey>(options.keyType == CreateIdentityOptions::KeyType::ec
                                                             ? dht::crypto::PrivateKey::generateEC()
                                                             : dht::crypto::PrivateKey::generate(options.rsaBits));
    CertificateSpec spec;
    spec.commonName = options.name;
    spec.hostNames = options.hostNames;
    std::shared_ptr<dht::crypto::Certificate> cert;
    if (auto s = buildCertificate(*key, spec, {}, cert); !s)
        return s;

    std::string keyText;
    Wipe wipe{keyText};
    if (auto s = exportKey(*key, options.password, keyText); !s)
        return s;
    const std::string certText = cert->toString(true);
    if (certText.empty())
        return fail("cannot export the certificate");

    if (auto s = writeNewFile(files.key, keyText); !s)
        return s;
    if (auto s = writeNewFile(files.certificate, certText); !s) {
        ::unlink(files.key.c_str());
        return s;
    }
    out = {std::move(key), std::move(cert)};
    return Status::ok();
}

} // namespace

IdentityFiles identityFiles(const std::string& prefix) {
    return {prefix + ".pem", prefix + ".crt"};
}

Status loadIdentity(const IdentityFiles& files, const std::string& password, dht::crypto::Identity& out) noexcept {
    try {
        return load(files, password, out);
    } catch (const std::exception& e) {
        return fail(std::string("cannot load the identity: ") + e.what());
    }
}

Status createIdentity(const IdentityFiles& files, const CreateIdentityOptions& options,
                      dht::crypto::Identity& out) noexcept {
    try {
        return create(files, options, out);
    } catch (const std::exception& e) {
        return fail(std::string("cannot create the identity: ") + e.what());
    }
}

Status loadOrCreateIdentity(const std::string& prefix, const std::string& password, bool create,
                            const CreateIdentityOptions& options, dht::crypto::Identity& out, bool* created) noexcept {
    if (created)
        *created = false;
    const IdentityFiles files = identityFiles(prefix);
    if (!create || exists(files.key) || exists(files.certificate))
        return loadIdentity(files, password, out);
    CreateIdentityOptions withPassword = options;
    withPassword.password = password;
    Status s = createIdentity(files, withPassword, out);
    if (s && created)
        *created = true;
    return s;
}

} // namespace dhtgate::tls
