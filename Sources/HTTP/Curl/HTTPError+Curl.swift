import CCurl

extension HTTPError {
    /// Classifies a libcurl result, so retry decisions never depend on raw curl numbers.
    /// - Parameters:
    ///   - curlCode: The transfer's `CURLcode`.
    ///   - detail: libcurl's error-buffer text, if any.
    init(curlCode: CURLcode, detail: String) {
        let message = detail.isEmpty ? String(cString: curl_easy_strerror(curlCode)) : detail
        self.init(code: Self.classify(curlCode), message: message, curlCode: Int(curlCode.rawValue))
    }

    private static func classify(_ code: CURLcode) -> Code {
        switch code {
        case CURLE_OPERATION_TIMEDOUT:
            return .timeout
        case CURLE_COULDNT_CONNECT:
            return .connectionFailed
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return .dnsFailure
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE,
             CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3, CURLE_QUIC_CONNECT_ERROR:
            return .connectionReset
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
             CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED,
             CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
             CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return .tls
        case CURLE_FILESIZE_EXCEEDED:
            return .tooLarge
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL, CURLE_BAD_FUNCTION_ARGUMENT,
             CURLE_UNKNOWN_OPTION, CURLE_NOT_BUILT_IN:
            return .invalidRequest
        default:
            return .other
        }
    }
}
