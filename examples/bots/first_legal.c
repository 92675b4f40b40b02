/* A belote-p2p bot program in C (standard library only): protocol/BOTS.md.
 *
 *     cc -O2 -o first_legal examples/bots/first_legal.c
 *     belote-p2p arena --bots 'exec:cmd=./first_legal,rules'
 *
 * It plays the first legal action. It needs no JSON library: the table writes compact JSON
 * whose strings need no escaping (BOTS.md, "Lines"), so the message type, the decision's id
 * and the first legal action can be found by their keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE (1 << 20)

static int is_type(const char *line, const char *type) {
    char key[64];
    snprintf(key, sizeof key, "{\"type\":\"%s\"", type);
    return strncmp(line, key, strlen(key)) == 0;
}

/* The text of the first string in the array under "key" (e.g. "legal"), copied into out. */
static int first_string(const char *line, const char *key, char *out, size_t size) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":[\"", key);
    const char *start = strstr(line, pattern);
    if (start == NULL) return 0;
    start += strlen(pattern);
    const char *end = strchr(start, '"');
    if (end == NULL || (size_t)(end - start) >= size) return 0;
    memcpy(out, start, end - start);
    out[end - start] = '\0';
    return 1;
}

int main(void) {
    static char line[MAX_LINE];
    char action[64];
    while (fgets(line, sizeof line, stdin) != NULL) {
        if (is_type(line, "hello")) {
            printf("{\"type\":\"hello\",\"protocol\":1,\"name\":\"first-legal\","
                   "\"version\":\"1.0\",\"options\":{}}\n");
        } else if (is_type(line, "decide")) {
            const char *id = strstr(line, "\"id\":");
            if (id == NULL || !first_string(line, "legal", action, sizeof action)) return 1;
            printf("{\"type\":\"action\",\"id\":%ld,\"action\":\"%s\"}\n",
                   strtol(id + 5, NULL, 10), action);
        } else if (is_type(line, "quit")) {
            return 0;
        }
        fflush(stdout); /* each answer must reach the table now, not when a buffer fills */
    }
    return 0;
}
