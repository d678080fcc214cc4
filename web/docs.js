// The API reference at /docs: Swagger UI (swagger-ui-dist, served from this server, no CDN)
// rendering /openapi.json. No validator badge: it would call an outside service.
(function () {
  'use strict';
  window.SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    docExpansion: 'list',
  });
})();
