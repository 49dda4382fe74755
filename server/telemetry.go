package server

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// OTLP environment variables that turn trace export on (the
// OpenTelemetry exporter's standard ones).
const (
	envOTLPEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envOTLPTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
)

// NewTracerProvider returns a tracer provider exporting spans over OTLP
// (HTTP/protobuf) to endpoint (a URL such as http://collector:4318), or
// to where the standard OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT variables say when endpoint is "".
// Without either it returns nil: export is off by default and the
// server's spans cost next to nothing. Shut the provider down on exit to
// send the last spans.
func NewTracerProvider(ctx context.Context, endpoint, version string) (*sdktrace.TracerProvider, error) {
	var opts []otlptracehttp.Option
	switch {
	case endpoint != "":
		opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
	case os.Getenv(envOTLPEndpoint) == "" && os.Getenv(envOTLPTracesEndpoint) == "":
		return nil, nil
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("server: the OTLP trace exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		semconv.ServiceName("skillhost"), semconv.ServiceVersion(version)))
	if err != nil {
		res = resource.Default()
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
