/*
 * kafka-floor: what librdkafka alone costs per record and per hop on the embedded broker
 * (librdkafka's mock cluster), with nothing of ours in the way: the floor under
 * `receiptd bench pipeline`'s Kafka overhead, as the C loop is under `bench verify`.
 *
 *   floor run RECORDS HOPS PARTITIONS VALUE_BYTES RATE TIERS
 *
 * One process holds the mock cluster (one broker, as `bench pipeline`), topics t0..tHOPS of
 * PARTITIONS partitions, each with TIERS idle topics `t(i).retry.<n>` a worker also reads, as
 * ours read their retry tiers. HOPS pass-through workers (t(i) -> t(i+1)), each its own process and
 * consumer group, copy every record with its key and headers plus one header, produce it through
 * an idempotent producer with the embedded broker's settings (linger 40 ms, one request in flight,
 * acks all) and store each input's offset once its copy is acknowledged (one store per
 * acknowledgement, not a per-partition watermark as the runner keeps: a floor for CPU, not a
 * delivery guarantee; it stores more often than our workers do); stored offsets are committed
 * automatically. A generator writes RECORDS keyed records of VALUE_BYTES into t0 and a
 * counter reads tHOPS until it has them all. The generator keeps to RATE records a second, so the
 * workers see records arrive as `bench pipeline`'s later stages do, not in one backlog. Prints each
 * worker's CPU per record (from its first record to its last), the broker process's CPU per record
 * over the run, and the rate.
 */
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_seconds(int who) {
    struct rusage usage;
    getrusage(who, &usage);
    return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static void set(rd_kafka_conf_t *conf, const char *name, const char *value) {
    char error[256];
    if (rd_kafka_conf_set(conf, name, value, error, sizeof error) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "floor: %s=%s: %s\n", name, value, error);
        exit(2);
    }
}

static rd_kafka_t *make(rd_kafka_type_t type, rd_kafka_conf_t *conf) {
    char error[256];
    rd_kafka_t *client = rd_kafka_new(type, conf, error, sizeof error);
    if (!client) {
        fprintf(stderr, "floor: rd_kafka_new: %s\n", error);
        exit(2);
    }
    return client;
}

static rd_kafka_conf_t *producer_conf(const char *bootstrap) {
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "enable.idempotence", "true");
    set(conf, "acks", "all");
    set(conf, "linger.ms", "40");
    set(conf, "max.in.flight.requests.per.connection", "1");
    return conf;
}

static rd_kafka_t *consumer(const char *bootstrap, const char *group, const char *topic, int tiers) {
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", bootstrap);
    set(conf, "group.id", group);
    set(conf, "auto.offset.reset", "earliest");
    set(conf, "enable.auto.offset.store", "false");
    set(conf, "enable.partition.eof", "false");
    set(conf, "fetch.wait.max.ms", "10");
    rd_kafka_t *client = make(RD_KAFKA_CONSUMER, conf);
    rd_kafka_poll_set_consumer(client);
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1 + tiers);
    rd_kafka_topic_partition_list_add(topics, topic, RD_KAFKA_PARTITION_UA);
    char tier[64];
    for (int n = 1; n <= tiers; n++) {
        snprintf(tier, sizeof tier, "%s.retry.%d", topic, n);
        rd_kafka_topic_partition_list_add(topics, tier, RD_KAFKA_PARTITION_UA);
    }
    if (rd_kafka_subscribe(client, topics)) {
        fprintf(stderr, "floor: subscribe failed\n");
        exit(2);
    }
    rd_kafka_topic_partition_list_destroy(topics);
    return client;
}

/* The input position a produced copy stands for, stored once the copy is acknowledged. */
struct pending {
    int32_t partition;
    int64_t offset;
};

static volatile sig_atomic_t stopping = 0;
static void on_term(int signal) { (void)signal; stopping = 1; }

static rd_kafka_t *hop_consumer;
static const char *hop_input;
static long in_flight = 0;

static void delivered(rd_kafka_t *producer, const rd_kafka_message_t *message, void *opaque) {
    (void)producer;
    (void)opaque;
    struct pending *position = message->_private;
    in_flight--;
    if (message->err) {
        fprintf(stderr, "floor: delivery failed: %s\n", rd_kafka_err2str(message->err));
        exit(3);
    }
    rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(list, hop_input, position->partition)->offset = position->offset + 1;
    rd_kafka_offsets_store(hop_consumer, list);
    rd_kafka_topic_partition_list_destroy(list);
    free(position);
}

static int hop(const char *bootstrap, const char *input, const char *output, const char *group, int tiers) {
    signal(SIGTERM, on_term);
    hop_input = input;
    hop_consumer = consumer(bootstrap, group, input, tiers);
    rd_kafka_conf_t *conf = producer_conf(bootstrap);
    rd_kafka_conf_set_dr_msg_cb(conf, delivered);
    rd_kafka_t *producer = make(RD_KAFKA_PRODUCER, conf);
    rd_kafka_queue_t *queue = rd_kafka_queue_get_consumer(hop_consumer);
    rd_kafka_message_t *batch[1024];
    long records = 0;
    double cpu_first = 0, cpu_last = 0;
    while (!stopping) {
        ssize_t count = rd_kafka_consume_batch_queue(queue, in_flight > 0 ? 5 : 100, batch, 1024);
        for (ssize_t i = 0; i < count; i++) {
            rd_kafka_message_t *message = batch[i];
            if (message->err) {
                rd_kafka_message_destroy(message);
                continue;
            }
            if (records == 0) cpu_first = cpu_seconds(RUSAGE_SELF);
            rd_kafka_headers_t *headers = NULL;
            rd_kafka_headers_t *copy = rd_kafka_message_headers(message, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR
                                           ? rd_kafka_headers_copy(headers) : rd_kafka_headers_new(1);
            rd_kafka_header_add(copy, "floor-hop", -1, group, -1);
            struct pending *position = malloc(sizeof *position);
            position->partition = message->partition;
            position->offset = message->offset;
            rd_kafka_resp_err_t error;
            while ((error = rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(output),
                                              RD_KAFKA_V_KEY(message->key, message->key_len),
                                              RD_KAFKA_V_VALUE(message->payload, message->len),
                                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(copy),
                                              RD_KAFKA_V_OPAQUE(position), RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                rd_kafka_poll(producer, 10);
            }
            if (error) {
                fprintf(stderr, "floor: produce: %s\n", rd_kafka_err2str(error));
                return 3;
            }
            in_flight++;
            records++;
            rd_kafka_message_destroy(message);
        }
        long before = in_flight;
        rd_kafka_poll(producer, 0);
        // Bounded in flight, as the runner's maxInFlight: wait for acknowledgements past it.
        while (in_flight > 4096 && !stopping) rd_kafka_poll(producer, 10);
        if (records > 0 && (count > 0 || in_flight != before)) cpu_last = cpu_seconds(RUSAGE_SELF);
    }
    printf("hop %s->%s records=%ld cpu_us_per_record=%.1f\n", input, output, records,
           records ? (cpu_last - cpu_first) * 1e6 / records : 0.0);
    fflush(stdout);
    rd_kafka_flush(producer, 5000);
    rd_kafka_queue_destroy(queue);
    rd_kafka_consumer_close(hop_consumer);
    _exit(0);
}

static int generate(const char *bootstrap, const char *topic, long records, long bytes, double rate) {
    rd_kafka_t *producer = make(RD_KAFKA_PRODUCER, producer_conf(bootstrap));
    char *value = malloc(bytes);
    for (long i = 0; i < bytes; i++) value[i] = 'a' + (char)(i % 26);
    char key[32];
    double started = now_seconds();
    for (long i = 0; i < records; i++) {
        double due = started + i / rate, wait = due - now_seconds();
        if (wait > 0.0005) usleep((useconds_t)(wait * 1e6));
        int length = snprintf(key, sizeof key, "owner-%ld", i * 7919 % 100003);
        rd_kafka_headers_t *headers = rd_kafka_headers_new(2);
        rd_kafka_header_add(headers, "receiptd-submission-id", -1, key, length);
        while (rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, length),
                                 RD_KAFKA_V_VALUE(value, bytes), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                 RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            rd_kafka_poll(producer, 10);
        }
        rd_kafka_poll(producer, 0);
    }
    rd_kafka_flush(producer, 30000);
    _exit(0);
}

static int count_until(const char *bootstrap, const char *topic, long records) {
    rd_kafka_t *client = consumer(bootstrap, "floor-counter", topic, 0);
    long seen = 0;
    double first = 0;
    while (seen < records) {
        rd_kafka_message_t *message = rd_kafka_consumer_poll(client, 100);
        if (!message) continue;
        if (!message->err) {
            if (seen == 0) first = now_seconds();
            seen++;
        }
        rd_kafka_message_destroy(message);
    }
    printf("counted %ld in %.3f s\n", seen, now_seconds() - first);
    fflush(stdout);
    _exit(0);
}

static pid_t spawn(char *const argv[]) {
    pid_t pid = fork();
    if (pid == 0) {
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    return pid;
}

static int run(const char *self, long records, int hops, int partitions, long bytes, const char *rate, const char *tiers) {
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_t *holder = make(RD_KAFKA_PRODUCER, conf);
    rd_kafka_mock_cluster_t *cluster = rd_kafka_mock_cluster_new(holder, 1);
    const char *bootstrap = rd_kafka_mock_cluster_bootstraps(cluster);
    char topic[32], next[32], group[32], count[32];
    for (int i = 0; i <= hops; i++) {
        snprintf(topic, sizeof topic, "t%d", i);
        rd_kafka_mock_topic_create(cluster, topic, partitions, 1);
        for (int n = 1; n <= atoi(tiers); n++) {
            snprintf(next, sizeof next, "t%d.retry.%d", i, n);
            rd_kafka_mock_topic_create(cluster, next, partitions, 1);
        }
    }
    pid_t workers[16];
    for (int i = 0; i < hops; i++) {
        snprintf(topic, sizeof topic, "t%d", i);
        snprintf(next, sizeof next, "t%d", i + 1);
        snprintf(group, sizeof group, "hop-%d", i);
        char *argv[] = {(char *)self, "hop", (char *)bootstrap, topic, next, group, (char *)tiers, NULL};
        workers[i] = spawn(argv);
    }
    sleep(8);  // the mock's first group join takes about 3 s, the groups join one after another
    snprintf(topic, sizeof topic, "t%d", hops);
    snprintf(count, sizeof count, "%ld", records);
    char *counter_argv[] = {(char *)self, "count", (char *)bootstrap, topic, count, NULL};
    pid_t counter = spawn(counter_argv);
    sleep(5);
    char size[32];
    snprintf(size, sizeof size, "%ld", bytes);
    double cpu_before = cpu_seconds(RUSAGE_SELF), started = now_seconds();
    char *generator_argv[] = {(char *)self, "generate", (char *)bootstrap, "t0", count, size, (char *)rate, NULL};
    pid_t generator = spawn(generator_argv);
    int status;
    waitpid(counter, &status, 0);
    double elapsed = now_seconds() - started, broker_cpu = cpu_seconds(RUSAGE_SELF) - cpu_before;
    waitpid(generator, &status, 0);
    for (int i = 0; i < hops; i++) kill(workers[i], SIGTERM);
    for (int i = 0; i < hops; i++) waitpid(workers[i], &status, 0);
    printf("broker cpu_us_per_record=%.1f (its process, generator start to last record counted)\n",
           broker_cpu * 1e6 / records);
    printf("records_per_second=%.0f (generator start to last record counted)\n", records / elapsed);
    fflush(stdout);
    rd_kafka_mock_cluster_destroy(cluster);
    rd_kafka_destroy(holder);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 8 && !strcmp(argv[1], "run"))
        return run(argv[0], atol(argv[2]), atoi(argv[3]), atoi(argv[4]), atol(argv[5]), argv[6], argv[7]);
    if (argc == 7 && !strcmp(argv[1], "hop")) return hop(argv[2], argv[3], argv[4], argv[5], atoi(argv[6]));
    if (argc == 7 && !strcmp(argv[1], "generate"))
        return generate(argv[2], argv[3], atol(argv[4]), atol(argv[5]), atof(argv[6]));
    if (argc == 5 && !strcmp(argv[1], "count")) return count_until(argv[2], argv[3], atol(argv[4]));
    fprintf(stderr, "usage: floor run RECORDS HOPS PARTITIONS VALUE_BYTES RATE TIERS\n");
    return 2;
}
