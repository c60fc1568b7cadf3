/* global SwaggerUIBundle -- set by swagger-ui-bundle.js, loaded before this file */
// Starts Swagger UI on /docs with the settings the page carries as JSON: the page's
// Content-Security-Policy runs no inline script, so this is a file of its own.
const settings = JSON.parse(document.getElementById("swagger-settings").textContent);

window.addEventListener("load", () => {
  window.ui = SwaggerUIBundle({
    url: window.location.origin + settings.url,
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    // The document of this gateway only: no box to explore other URLs with.
    layout: "BaseLayout",
    ...settings.options
  });
});
