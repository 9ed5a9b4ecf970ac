import HTTP
import Testing

@Suite struct HTTPValueTests {
    @Test func headerLookupIgnoresCaseAndKeepsOrder() {
        var headers: HTTPHeaders = ["Retry-After": "30", "Set-Cookie": "a=1"]
        headers.add(name: "set-cookie", value: "b=2")
        #expect(headers["retry-after"] == "30")
        #expect(headers["RETRY-AFTER"] == "30")
        #expect(headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        headers["SET-COOKIE"] = "c=3"
        #expect(headers.values(for: "set-cookie") == ["c=3"])
        headers.remove("Retry-after")
        #expect(headers["Retry-After"] == nil)
        #expect(headers.count == 1)
    }

    @Test func versionTokens() {
        #expect(HTTPVersion(token: "HTTP/1.1") == .http1_1)
        #expect(HTTPVersion(token: "HTTP/2") == .http2)
        #expect(HTTPVersion(token: "HTTP/1.0") == .http1_0)
        #expect(HTTPVersion(token: "SPDY/3") == nil)
        #expect(HTTPVersion.http2.description == "HTTP/2")
        #expect(HTTPVersion.http1_1.description == "HTTP/1.1")
    }

    @Test func requestValidationRejectsMalformedInput() {
        #expect(throws: HTTPError.self) { try HTTPRequest(url: "ftp://example.com").validate() }
        #expect(throws: HTTPError.self) { try HTTPRequest(url: "http://exa mple.com").validate() }
        #expect(throws: HTTPError.self) {
            try HTTPRequest(url: "http://example.com", headers: ["X-Bad": "a\r\nInjected: 1"]).validate()
        }
        #expect(throws: HTTPError.self) { try HTTPRequest(url: "http://example.com", headers: ["Bad Name": "x"]).validate() }
        #expect(throws: Never.self) { try HTTPRequest(url: "HTTPS://example.com/a?b=c").validate() }
    }

    @Test func retryClassification() {
        for code in [HTTPError.Code.timeout, .connectionFailed, .connectionReset, .dnsFailure] {
            #expect(HTTPError(code: code, message: "").isRetryable, "\(code)")
        }
        for code in [HTTPError.Code.tls, .tooLarge, .invalidRequest, .invalidConfiguration, .shutdown, .other] {
            #expect(!HTTPError(code: code, message: "").isRetryable, "\(code)")
        }
    }

    @Test func configurationValidation() {
        var client = CurlHTTPClient.Configuration()
        client.defaultRequestTimeout = .zero
        #expect { try CurlHTTPClient(configuration: client) } throws: { ($0 as? HTTPError)?.code == .invalidConfiguration }

        #expect { try HTTPServer(configuration: .init(host: "example.com"), handler: { _ in .text("") }) } throws: {
            ($0 as? HTTPServerError)?.code == .invalidConfiguration
        }
        #expect { try HTTPServer(configuration: .init(threadPoolSize: 0), handler: { _ in .text("") }) } throws: {
            ($0 as? HTTPServerError)?.code == .invalidConfiguration
        }
    }

    @Test func libcurlHasHTTP2() {
        #expect(CurlHTTPClient.supportsHTTP2)
    }
}
