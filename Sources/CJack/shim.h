#ifndef SPECTRUM_CJACK_SHIM_H
#define SPECTRUM_CJACK_SHIM_H
#include <jack/jack.h>
#include <jack/ringbuffer.h>
#include <jack/midiport.h>

/// jack_client_open is variadic, which Swift cannot call: this wrapper passes the
/// optional server name explicitly (NULL = the default server).
static inline jack_client_t *spectrum_jack_client_open(const char *client_name,
                                                       jack_options_t options,
                                                       jack_status_t *status,
                                                       const char *server_name) {
    if (server_name != NULL) {
        return jack_client_open(client_name, (jack_options_t)(options | JackServerName), status, server_name);
    }
    return jack_client_open(client_name, options, status);
}
#endif
