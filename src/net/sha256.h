/* sha256.h - SHA-256 and HMAC-SHA-256 (FIPS 180-4, RFC 2104), for the job key handshake. */
#ifndef SDSM_NET_SHA256_H
#define SDSM_NET_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sdsm_sha256 {
    uint32_t h[8];
    uint64_t total;
    uint8_t buf[64];
    size_t used;
} sdsm_sha256_t;

void sdsm_sha256_init(sdsm_sha256_t *s);
void sdsm_sha256_update(sdsm_sha256_t *s, const void *data, size_t len);
void sdsm_sha256_final(sdsm_sha256_t *s, uint8_t out[32]);
void sdsm_hmac_sha256(const uint8_t *key, size_t keylen, const void *msg, size_t len, uint8_t out[32]);

#endif
