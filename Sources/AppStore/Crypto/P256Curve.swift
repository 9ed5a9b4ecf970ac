import COpenSSL

/// OpenSSL's P-256 group and the constants an ECDSA verification needs from it, made once per
/// process. Never changed after creation, so shared by every thread (OpenSSL reads a group it is
/// given as `const`).
final class P256Curve: @unchecked Sendable {
    static let shared: P256Curve? = P256Curve()

    /// The `EC_GROUP*` of `prime256v1`.
    let group: OpaquePointer
    /// The group order n (owned by `group`).
    let order: OpaquePointer
    /// The field prime p.
    let prime: OpaquePointer
    /// p − n: an x coordinate at or above n reduces to r only for r below it.
    let primeMinusOrder: OpaquePointer

    private init?() {
        guard let group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1) else { return nil }
        guard let order = EC_GROUP_get0_order(group), let prime = BN_new(), let difference = BN_new() else {
            EC_GROUP_free(group)
            return nil
        }
        guard EC_GROUP_get_curve(group, prime, nil, nil, nil) == 1, BN_sub(difference, prime, order) == 1 else {
            BN_free(prime)
            BN_free(difference)
            EC_GROUP_free(group)
            return nil
        }
        self.group = group
        self.order = order
        self.prime = prime
        primeMinusOrder = difference
    }

    deinit {
        BN_free(prime)
        BN_free(primeMinusOrder)
        EC_GROUP_free(group)
    }

    /// The point an encoded public key (SEC 1, compressed or not) stands for; nil unless it is a
    /// point of the curve.
    func point(encoded bytes: UnsafeRawBufferPointer) -> P256Point? {
        guard let point = EC_POINT_new(group) else { return nil }
        guard let base = bytes.baseAddress,
              EC_POINT_oct2point(group, point, base.assumingMemoryBound(to: UInt8.self), bytes.count, nil) == 1 else {
            ERR_clear_error()
            EC_POINT_free(point)
            return nil
        }
        return P256Point(owning: point)
    }
}

/// Owner of one `EC_POINT*` of ``P256Curve``: a leaf key's point, read by every check of it (so
/// never changed once made).
final class P256Point: @unchecked Sendable {
    let pointer: OpaquePointer

    init(owning pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { EC_POINT_free(pointer) }
}
