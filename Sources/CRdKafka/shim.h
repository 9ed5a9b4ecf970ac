#ifndef CRDKAFKA_SHIM_H
#define CRDKAFKA_SHIM_H

// The whole librdkafka C surface the `Kafka` module uses. Everything we need is
// importable as-is: produce goes through `rd_kafka_produceva` (an `rd_kafka_vu_t`
// array, no variadics) and the integer macros (`RD_KAFKA_OFFSET_*`,
// `RD_KAFKA_MSG_F_*`) import as constants, so no `CRdKafka_*` wrappers are needed.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#endif /* CRDKAFKA_SHIM_H */
