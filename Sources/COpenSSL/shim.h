#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

// OpenSSL 3.0 headers used by the AppStore module. Only the `static inline` wrappers below are
// ours: each exists because Swift cannot import the underlying C construct (macro or variadic).

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pkcs7.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

// OPENSSL_free is a function-like macro (adds file/line to CRYPTO_free).
static inline void COpenSSL_OPENSSL_free(void *ptr) { OPENSSL_free(ptr); }

// sk_X509_new_null is a type-safe stack macro.
static inline STACK_OF(X509) *COpenSSL_sk_X509_new_null(void) { return sk_X509_new_null(); }

// sk_X509_push is a type-safe stack macro.
static inline int COpenSSL_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }

// sk_X509_free is a type-safe stack macro (frees the stack, not the certificates).
static inline void COpenSSL_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }

// sk_X509_num is a type-safe stack macro.
static inline int COpenSSL_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }

// sk_X509_value is a type-safe stack macro.
static inline X509 *COpenSSL_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }

// BIO_get_mem_data is a function-like macro over BIO_ctrl.
static inline long COpenSSL_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

// PKCS7_type_is_signed is a function-like macro over OBJ_obj2nid.
static inline int COpenSSL_PKCS7_type_is_signed(const PKCS7 *p7) { return PKCS7_type_is_signed(p7); }

// PKCS7_type_is_data is a function-like macro over OBJ_obj2nid.
static inline int COpenSSL_PKCS7_type_is_data(const PKCS7 *p7) { return PKCS7_type_is_data(p7); }

// PKCS7_get_detached is a function-like macro over PKCS7_ctrl.
static inline long COpenSSL_PKCS7_get_detached(PKCS7 *p7) { return PKCS7_get_detached(p7); }

// sk_PKCS7_SIGNER_INFO_num is a type-safe stack macro.
static inline int COpenSSL_sk_PKCS7_SIGNER_INFO_num(const STACK_OF(PKCS7_SIGNER_INFO) *stack) { return sk_PKCS7_SIGNER_INFO_num(stack); }

// sk_PKCS7_SIGNER_INFO_value is a type-safe stack macro.
static inline PKCS7_SIGNER_INFO *COpenSSL_sk_PKCS7_SIGNER_INFO_value(const STACK_OF(PKCS7_SIGNER_INFO) *stack, int index) { return sk_PKCS7_SIGNER_INFO_value(stack, index); }

// SHA-256 on a context the caller owns (SHA256Digest): a state kept by value can be remembered
// and copied (a JWS header's, SHA256PrefixStates), where an EVP context costs an allocation and a
// provider call to create or copy. OpenSSL 3 deprecates these functions but keeps them, on the
// same assembly as EVP's SHA-256.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline void COpenSSL_SHA256_Init(SHA256_CTX *context) { SHA256_Init(context); }
static inline void COpenSSL_SHA256_Update(SHA256_CTX *context, const void *data, size_t length) { SHA256_Update(context, data, length); }
static inline void COpenSSL_SHA256_Final(unsigned char *digest, SHA256_CTX *context) { SHA256_Final(digest, context); }
// A point's Jacobian coordinates (P256BatchVerification compares x without the inversion that
// affine coordinates cost). Deprecated in OpenSSL 3 with the rest of the GFp-specific calls, kept.
static inline int COpenSSL_EC_POINT_get_Jprojective_coordinates_GFp(const EC_GROUP *group, const EC_POINT *point,
                                                                    BIGNUM *x, BIGNUM *y, BIGNUM *z, BN_CTX *context) {
    return EC_POINT_get_Jprojective_coordinates_GFp(group, point, x, y, z, context);
}
#pragma GCC diagnostic pop

#endif
