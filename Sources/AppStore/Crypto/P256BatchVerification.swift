import COpenSSL

/// ES256 signatures verified together: the ECDSA verification equation (SEC 1 §4.1.4) over
/// OpenSSL's P-256 arithmetic, with the two modular inversions a lone check pays shared by the
/// batch. Checked one at a time, a signature costs an inversion of s modulo the order and one of
/// the result's z coordinate for its affine x: of the 58 µs an `EVP_PKEY_verify` takes here, the
/// scalar multiplication is 48 and the affine x 3.5. Here all the s are inverted with one
/// inversion (Montgomery's trick: three multiplications each), and x is compared in Jacobian
/// coordinates (X = r·Z² mod p), which needs none: about 50 µs per signature in a batch of 64.
///
/// Everything a verification rejects is rejected here too: r and s outside [1, n−1], a result at
/// infinity, an x that does not reduce to r modulo n. The verdicts equal `EVP_PKEY_verify`'s
/// (P256BatchVerificationTests: genuine, altered, out-of-range, high-s, at-infinity and Apple's
/// own signatures; the fuzz target FuzzES256Batch).
enum P256BatchVerification {
    typealias Words = (UInt64, UInt64, UInt64, UInt64)

    /// One check: the public point, the signature's r and s and the digest, each 32 bytes big-endian.
    struct Check {
        let point: P256Point
        let r: Words
        let s: Words
        let digest: Words
    }

    /// 32 bytes as a check keeps them (their order in memory, so big-endian still).
    static func words<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Words {
        precondition(bytes.count == 32, "an ES256 number or digest is 32 bytes")
        var words: Words = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: bytes) }
        return words
    }

    /// The verdict of each check, in order; nil when OpenSSL failed for a reason that says nothing
    /// about the signatures (an allocation), for the caller to check them one by one instead.
    static func verify(_ checks: [Check]) -> [Bool]? {
        guard !checks.isEmpty else { return [] }
        guard let curve = P256Curve.shared, let context = BN_CTX_new() else { return nil }
        defer { BN_CTX_free(context) }
        BN_CTX_start(context)
        defer { BN_CTX_end(context) }
        return Run(curve: curve, context: context)?.verify(checks)
    }

    /// One batch's scratch numbers, from the batch's `BN_CTX`.
    private struct Run {
        let curve: P256Curve
        let context: OpaquePointer
        let r, s, e, w, inverse, u1, u2, x, y, z, zz, expected: OpaquePointer

        init?(curve: P256Curve, context: OpaquePointer) {
            var numbers: [OpaquePointer] = []
            for _ in 0..<12 {
                guard let number = BN_CTX_get(context) else { return nil }
                numbers.append(number)
            }
            self.curve = curve
            self.context = context
            (r, s, e, w, inverse, u1, u2) = (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5], numbers[6])
            (x, y, z, zz, expected) = (numbers[7], numbers[8], numbers[9], numbers[10], numbers[11])
        }

        func verify(_ checks: [Check]) -> [Bool]? {
            let n = curve.order
            var verdicts = [Bool](repeating: false, count: checks.count)
            // Forward: the checks whose r and s are in range, and the running products of their s.
            var included: [Int] = [], products: [OpaquePointer] = []
            included.reserveCapacity(checks.count)
            products.reserveCapacity(checks.count)
            for index in checks.indices {
                guard load(r, checks[index].r), load(s, checks[index].s) else { return nil }
                guard inRange(r), inRange(s) else { continue }  // rejected: verdict stays false
                guard let product = BN_CTX_get(context) else { return nil }
                let made = products.last.map { BN_mod_mul(product, $0, s, n, context) } ?? (BN_copy(product, s) != nil ? 1 : 0)
                guard made == 1 else { return nil }
                included.append(index)
                products.append(product)
            }
            guard let last = products.last else { return verdicts }
            // n is prime and every factor is in [1, n−1], so the product is invertible.
            guard BN_mod_inverse(inverse, last, n, context) != nil else { return nil }
            guard let point = EC_POINT_new(curve.group) else { return nil }
            defer { EC_POINT_free(point) }
            // Backward: `inverse` is the inverse of the product of the first k + 1 included s.
            for k in included.indices.reversed() {
                let check = checks[included[k]]
                guard load(r, check.r), load(s, check.s), load(e, check.digest) else { return nil }
                if k > 0 {
                    guard BN_mod_mul(w, inverse, products[k - 1], n, context) == 1,
                          BN_mod_mul(inverse, inverse, s, n, context) == 1 else { return nil }
                } else {
                    guard BN_copy(w, inverse) != nil else { return nil }
                }
                // u1 = e·w, u2 = r·w (mod n); the point u1·G + u2·Q.
                guard BN_mod_mul(u1, e, w, n, context) == 1, BN_mod_mul(u2, r, w, n, context) == 1,
                      EC_POINT_mul(curve.group, point, u1, check.point.pointer, u2, context) == 1 else { return nil }
                guard let valid = xReducesToR(point) else { return nil }
                verdicts[included[k]] = valid
            }
            return verdicts
        }

        /// Whether the point's affine x is r modulo n: X = r·Z² (mod p), or, for an x in [n, p),
        /// X = (r + n)·Z². nil when OpenSSL failed.
        private func xReducesToR(_ point: OpaquePointer) -> Bool? {
            let p = curve.prime
            if EC_POINT_is_at_infinity(curve.group, point) == 1 { return false }
            guard COpenSSL_EC_POINT_get_Jprojective_coordinates_GFp(curve.group, point, x, y, z, context) == 1,
                  BN_nnmod(x, x, p, context) == 1, BN_mod_sqr(zz, z, p, context) == 1,
                  BN_mod_mul(expected, zz, r, p, context) == 1 else { return nil }
            if BN_cmp(expected, x) == 0 { return true }
            guard BN_cmp(r, curve.primeMinusOrder) < 0 else { return false }
            guard BN_add(expected, r, curve.order) == 1, BN_mod_mul(expected, zz, expected, p, context) == 1 else { return nil }
            return BN_cmp(expected, x) == 0
        }

        private func inRange(_ value: OpaquePointer) -> Bool {
            BN_is_zero(value) == 0 && BN_cmp(value, curve.order) < 0
        }

        private func load(_ number: OpaquePointer, _ words: Words) -> Bool {
            withUnsafeBytes(of: words) { BN_bin2bn($0.baseAddress!.assumingMemoryBound(to: UInt8.self), 32, number) != nil }
        }
    }
}
