module.exports = (output) => output.toUpperCase();
